package scripts

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// step says when a build starts, that it still runs, and when it ends with
// its duration or its failure.
func TestStepSaysStartProgressAndEnd(t *testing.T) {
	lib := filepath.Join(repo(t), "hack/progress.sh")
	script := `. "$1"; step "a slow build" sleep 0.7; step "a failing build" false; echo "status $?"`
	cmd := exec.Command("bash", "-c", script, "progress-test", lib)
	cmd.Env = append(os.Environ(), "PROGRESS_EVERY=0.2", "PROGRESS_PREFIX=test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"test: a slow build: started\n", "test: a slow build: still running after ",
		"test: a slow build: done in ", "test: a failing build: failed (exit 1) after ", "status 1\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "a slow build: still running"); n < 2 {
		t.Errorf("%d progress lines during 0.7 s at one a 0.2 s:\n%s", n, got)
	}
}

// The progress lines stop with the step: nothing is left running that would
// hold the caller's pipe open after the script ends, however quickly the
// step ends (a TERM landing between the heartbeat's fork of its sleep and
// its note of the pid once left that sleep on the pipe): many quick steps
// make that window likely to be hit.
func TestStepLeavesNothingRunning(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", `. "$1"; for i in $(seq 40); do step quick true; done`, "progress-test",
		filepath.Join(repo(t), "hack/progress.sh"))
	cmd.Env = append(os.Environ(), "PROGRESS_EVERY=30")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "quick: done in") {
		t.Fatalf("%v\n%s", err, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the caller waited %s for the output to close: the progress loop outlived its step", d)
	}
}

// Every Go build of the long build scripts runs as a step, so none of them
// is silent for the 20 to 40 minutes a cold build takes.
func TestLongBuildsRunAsSteps(t *testing.T) {
	build := regexp.MustCompile(`"\$go" (build|install)\b`)
	for _, s := range []string{"hack/images.sh", "hack/helm-check.sh", "hack/build-controlplane.sh", "hack/e2e-build.sh"} {
		raw, err := os.ReadFile(filepath.Join(repo(t), s))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, l := range strings.Split(string(raw), "\n") {
			if build.MatchString(l) {
				n++
				if !strings.Contains(l, "step ") {
					t.Errorf("%s:%d: a Go build outside step: %s", s, i+1, strings.TrimSpace(l))
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no Go build found: the pattern no longer matches", s)
		}
	}
}

package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// hack/timed.sh says how long a step of make test took, on stderr and in
// STEP_TIMES, and passes its status on: a failed step stops make test.
func TestTimedSaysEachStepsDurationAndStatus(t *testing.T) {
	timed := filepath.Join(repo(t), "hack/timed.sh")
	times := filepath.Join(t.TempDir(), "step-times")
	run := func(name string, args ...string) (string, int) {
		cmd := exec.Command(timed, append([]string{name}, args...)...)
		cmd.Env = append(os.Environ(), "STEP_TIMES="+times)
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return string(out), exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	// At least a second for a step of 1.1 s, however loaded the machine.
	out, rc := run("a quick step", "sh", "-c", "echo working; sleep 1.1")
	if rc != 0 || !regexp.MustCompile(`^working\nstep a quick step: [1-9][0-9]* s\n$`).MatchString(out) {
		t.Errorf("a step that passed: exit %d, output %q", rc, out)
	}
	out, rc = run("a failing step", "sh", "-c", "exit 3")
	if rc != 3 || !regexp.MustCompile(`^step a failing step: failed \(exit 3\) after [0-9]+ s\n$`).MatchString(out) {
		t.Errorf("a step that failed: exit %d, output %q", rc, out)
	}
	b, err := os.ReadFile(times)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^step a quick step: [1-9][0-9]* s\nstep a failing step: failed \(exit 3\) after [0-9]+ s\n$`).Match(b) {
		t.Errorf("STEP_TIMES holds %q, want both steps' lines in order", b)
	}
}

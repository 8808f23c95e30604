package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/state"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func locusBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "locus-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "locus")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// v1Controllers are the hierarchies `locus run` creates its cgroups in.
var v1Controllers = []string{"cpuset", "memory", "cpu", "cpuacct"}

// kernelRun prepares a real-kernel `locus run` test on this host's cgroup v1:
// a fresh state directory and a cgroup parent of the test's own, removed at
// cleanup (processes killed, children first) whatever happened.
func kernelRun(t *testing.T) (bin, stateDir, parent string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("real-kernel locus run test needs root to create cgroups")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpuset/cpuset.cpus"); err != nil {
		t.Skip("host has no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset")
	}
	bin = locusBinary(t)
	parent = fmt.Sprintf("locus-test-%d-%s", os.Getpid(), strings.ToLower(strings.TrimPrefix(t.Name(), "TestRun")))
	t.Cleanup(func() { removeTestCgroups(t, parent) })
	return bin, filepath.Join(t.TempDir(), "state"), parent
}

func removeTestCgroups(t *testing.T, parent string) {
	for _, c := range v1Controllers {
		top := filepath.Join("/sys/fs/cgroup", c, parent)
		kids, _ := filepath.Glob(filepath.Join(top, "*", "cgroup.procs"))
		for _, procs := range append(kids, filepath.Join(top, "cgroup.procs")) {
			raw, _ := os.ReadFile(procs)
			for _, f := range strings.Fields(string(raw)) {
				var pid int
				fmt.Sscan(f, &pid)
				if pid > 0 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		dirs, _ := filepath.Glob(filepath.Join(top, "*", ""))
		for _, d := range append(dirs, top) {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				for i := 0; i < 100 && syscall.Rmdir(d) == syscall.EBUSY; i++ {
					time.Sleep(10 * time.Millisecond)
				}
				if _, err := os.Stat(d); err == nil {
					t.Errorf("cleanup: could not remove %s", d)
				}
			}
		}
	}
}

// runArgs is a `locus run` command line for the test's state dir and parent.
func runArgs(stateDir, parent string, args ...string) []string {
	return append([]string{"run", "--state-dir", stateDir, "--cgroup-parent", parent}, args...)
}

// execLocus runs the binary to completion and returns stdout, stderr and the
// exit status.
func execLocus(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("locus %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func leases(t *testing.T, stateDir string) map[string]state.Lease {
	t.Helper()
	cp, err := (&state.Store{Dir: stateDir}).Load()
	if err != nil {
		t.Fatal(err)
	}
	return cp.Leases
}

// assertNothingLeft checks that no cgroup is left under parent and no lease in
// the checkpoint.
func assertNothingLeft(t *testing.T, stateDir, parent string) {
	t.Helper()
	for _, c := range v1Controllers {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, parent)); err == nil {
			t.Errorf("cgroup %s/%s is left behind", c, parent)
		}
	}
	if l := leases(t, stateDir); len(l) != 0 {
		t.Errorf("leases left behind: %+v", l)
	}
}

func allowedCPUs(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

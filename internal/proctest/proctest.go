// Package proctest starts processes for tests that look for them in /proc.
package proctest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartAs starts `sleep arg` as uid/gid and returns its pid once it runs
// sleep; picking another user needs root, and the test is skipped without
// it. The process is killed when the test ends.
func StartAs(t *testing.T, uid, gid uint32, arg string) int {
	t.Helper()
	c := exec.Command("sleep", arg)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	if err := c.Start(); err != nil {
		t.Skip("cannot start sleep as", uid, ":", err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	// Start returns once the child exists, not once it has exec'd: until
	// then its exe and cmdline are this test binary's.
	pid := c.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		raw, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if strings.Contains(string(raw), arg) {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep %s did not exec in 10 s", arg)
		}
	}
}

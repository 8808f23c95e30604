package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The agent started as nobody exits at once saying why, instead of running
// on and failing every reconcile with "permission denied".
func TestAgentAsNobodyExitsAtStart(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("builds the agent and runs it as nobody (needs root)")
	}
	bin := locusBinary(t)
	// nobody must reach the binary and own a state dir.
	_ = os.Chmod(filepath.Dir(bin), 0o755)
	state, err := os.MkdirTemp("", "locus-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	_ = os.Chmod(state, 0o777)
	// The credentials are set by the kernel at exec, not by a tool: the
	// NUMA guest's busybox setpriv cannot change ids.
	c := exec.Command(bin, "agent", "--standalone", "--once", "--state-dir", state, "--metrics-addr", "")
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := c.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs root (or CAP_SYS_ADMIN) to write cgroups") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("the refused agent left %d files in its state dir", len(entries))
	}
}

package agent

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// startAs starts `sleep arg` as uid/gid; the test needs root to pick them.
func startAs(t *testing.T, uid, gid uint32, arg string) int {
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

// Any local user can name a process qemu-system-x86_64 and give it the
// argument guest=vm1: the match must adopt only the user it names.
func TestMatchAdoptsOnlyTheNamedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as nobody")
	}
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("locus.slice/vm1")
	mine := startAs(t, 0, 0, "602.25")
	nobody := startAs(t, 65534, 65534, "602.25")
	h := newHarness(t, tree, head+"workloads:\n- {name: vm1, match: {comm: \"sle*\", cmdline: \"602.25\", uid: 0}}\n", nil)
	h.reconcile()
	got := strings.Fields(tree.get("cpuset", "locus.slice/vm1", "cgroup.procs"))
	if !slices.Equal(got, []string{strconv.Itoa(mine)}) {
		t.Fatalf("cgroup.procs = %v, want only root's %d (not nobody's %d)", got, mine, nobody)
	}
}

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
	"github.com/locus-project/locus/pkg/hostconfig"
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

func TestMatchByExeAndUnit(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	h := newHarness(t, tree, head+"workloads: []\n", nil)
	pid := startAs(t, uint32(os.Getuid()), uint32(os.Getgid()), "602.5")
	sleepPath, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Stat(sleepPath)
	self, _ := os.Stat("/proc/self/exe")
	if !h.a.adoptable(pid, hostconfig.Match{Cmdline: "602.5", Exe: sleepPath}, exe) {
		t.Errorf("a process running %s is not adopted by exe: %s", sleepPath, sleepPath)
	}
	if h.a.adoptable(pid, hostconfig.Match{Cmdline: "602.5", Exe: "/proc/self/exe"}, self) {
		t.Error("a process running sleep is adopted by another executable")
	}
	if h.a.adoptable(pid, hostconfig.Match{Cmdline: "602.5", Unit: "no-such.service"}, nil) {
		t.Error("a process outside the unit is adopted by unit")
	}
}

// Pid 1 and kernel threads are never adopted, whatever the match says.
func TestMatchNeverAdoptsInitOrKernelThreads(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	h := newHarness(t, tree, head+"workloads: []\n", nil)
	everyRoot := hostconfig.Match{Comm: "*", UID: new(int)}
	if h.a.adoptable(1, everyRoot, nil) {
		t.Error("pid 1 is adoptable")
	}
	if st, err := h.a.procs.Stat(2); err == nil && st.KernelThread() && h.a.adoptable(2, everyRoot, nil) {
		t.Errorf("kernel thread %s is adoptable", st.Comm)
	}
	for _, cg := range []string{"/user.slice/user-1000.slice/user@1000.service/app.slice/qemu.service", "/system.slice/other.service"} {
		if inSystemUnit(cg, "qemu.service") {
			t.Errorf("%s counts as in qemu.service", cg)
		}
	}
	if !inSystemUnit("/system.slice/qemu.service", "qemu.service") {
		t.Error("/system.slice/qemu.service is not in qemu.service")
	}
}

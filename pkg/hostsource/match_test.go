package hostsource

import (
	"os"
	"strconv"
	"testing"

	"github.com/locus-project/locus/internal/proctest"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/procfs"
)

func TestMatchByExeAndUnit(t *testing.T) {
	p := NewPreparer(Options{Procs: procfs.New("")})
	pid := proctest.StartAs(t, uint32(os.Getuid()), uint32(os.Getgid()), "602.5")
	sleepPath, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Stat(sleepPath)
	self, _ := os.Stat("/proc/self/exe")
	if !p.adoptable(pid, hostconfig.Match{Cmdline: "602.5", Exe: sleepPath}, exe) {
		t.Errorf("a process running %s is not adopted by exe: %s", sleepPath, sleepPath)
	}
	if p.adoptable(pid, hostconfig.Match{Cmdline: "602.5", Exe: "/proc/self/exe"}, self) {
		t.Error("a process running sleep is adopted by another executable")
	}
	if p.adoptable(pid, hostconfig.Match{Cmdline: "602.5", Unit: "no-such.service"}, nil) {
		t.Error("a process outside the unit is adopted by unit")
	}
}

// Pid 1 and kernel threads are never adopted, whatever the match says.
func TestMatchNeverAdoptsInitOrKernelThreads(t *testing.T) {
	p := NewPreparer(Options{Procs: procfs.New("")})
	everyRoot := hostconfig.Match{Comm: "*", UID: new(int)}
	if p.adoptable(1, everyRoot, nil) {
		t.Error("pid 1 is adoptable")
	}
	if st, err := p.o.Procs.Stat(2); err == nil && st.KernelThread() && p.adoptable(2, everyRoot, nil) {
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

package hostsource

import (
	"os"
	"slices"
	"strconv"
	"strings"
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

// unit: names a unit of the host's own service manager: the unit is the first
// level below the slices from the root. The same name deeper down is a unit of
// a delegated sub-tree (a service's own children, a container's own systemd, a
// user's manager), whoever runs there chose it, and it is never adopted.
func TestMatchUnitOnlyAtTheHostsOwnLevel(t *testing.T) {
	for _, tc := range []struct {
		cg, unit string
		in       bool
	}{
		{"/system.slice/qemu.service", "qemu.service", true},
		{"/system.slice/qemu.service/vcpu0", "qemu.service", true}, // the unit's own sub-cgroups
		{"/machine.slice/machine-qemu\\x2d1\\x2dvm.scope/libvirt/vcpu1", "machine-qemu\\x2d1\\x2dvm.scope", true},
		{"/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service", true},
		{"/system.slice", "system.slice", true},
		{"/machine.slice/machine-qemu.scope", "machine.slice", true},
		{"/system.slice/ci-runner.service/qemu.service", "qemu.service", false},
		{"/machine.slice/systemd-nspawn@box.service/payload/system.slice/qemu.service", "qemu.service", false},
		{"/machine.slice/libpod-0123abcd.scope/container/system.slice/qemu.service", "qemu.service", false},
		{"/docker/0123abcd/system.slice/qemu.service", "qemu.service", false},
		{"/system.slice/qemu.slice/qemu.service", "qemu.service", false}, // not a slice of system.slice
		{"/system.slice/docker-0123.scope/system.slice/qemu.service", "system.slice", true},
		{"/system.slice/ci-runner.service/system.slice", "system.slice", true},
		{"/system.slice/ci-runner.service/inner.slice", "inner.slice", false},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/qemu.service", "qemu.service", false},
		{"/system.slice/other.service", "qemu.service", false},
		{"/", "qemu.service", false},
		{"", "qemu.service", false},
	} {
		if got := inSystemUnit(tc.cg, tc.unit); got != tc.in {
			t.Errorf("%s in %s: %v, want %v", tc.cg, tc.unit, got, tc.in)
		}
	}
}

// Whatever /proc/PID/cgroup says, a unit put below a unit of the host (a
// delegated sub-tree) is never the host's own: inSystemUnit must say no for
// it however the rest of the path reads.
func FuzzInSystemUnit(f *testing.F) {
	for _, seed := range []struct{ cg, unit string }{
		{"/system.slice/qemu.service", "qemu.service"},
		{"/system.slice/ci-runner.service/qemu.service", "qemu.service"},
		{"/machine.slice/machine-a.slice/machine-a-b.slice/x.scope/y", "machine-a-b.slice"},
		{"/a-.slice/-.slice//.slice", ".slice"},
	} {
		f.Add(seed.cg, seed.unit)
	}
	f.Fuzz(func(t *testing.T, cg, unit string) {
		parts := strings.Split(strings.Trim(cg, "/"), "/")
		if inSystemUnit(cg, unit) && !slices.Contains(parts, unit) {
			t.Fatalf("%q in unit %q, which it does not name", cg, unit)
		}
		delegated := "/system.slice/delegate.service/" + strings.TrimLeft(cg, "/")
		if unit != "system.slice" && unit != "delegate.service" && inSystemUnit(delegated, unit) {
			t.Fatalf("%q (delegated) counts as in the host's %q", delegated, unit)
		}
	})
}

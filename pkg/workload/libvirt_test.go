package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

func TestParseLibvirtScope(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want LibvirtMachine
	}{
		{`machine-qemu\x2d1\x2dvm1.scope`, LibvirtMachine{"qemu", 1, "vm1"}},
		{`machine-qemu\x2d42\x2dweb\x2dfront.db.scope`, LibvirtMachine{"qemu", 42, "web-front.db"}},
		{`machine-qemu\x2d0\x2dA.scope`, LibvirtMachine{"qemu", 0, "A"}},
	} {
		got, err := ParseLibvirtScope(tc.dir)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.dir, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ dir, why string }{
		{"machine.slice", "want machine-<name>.scope"},
		{"system-getty.slice", "want machine-<name>.scope"},
		{`machine-lxc\x2d1\x2dct.scope`, "want the machine name qemu-<id>-<domain>"},
		{`machine-qemu\x2dx\x2dvm.scope`, "want the machine name qemu-<id>-<domain>"},
		{`machine-qemu\x2d01\x2dvm.scope`, "want the machine name qemu-<id>-<domain>"},
		{`machine-qemu\x2d1.scope`, "want the machine name qemu-<id>-<domain>"},
		{`machine-qemu\x2d1\x2d.scope`, "want the machine name qemu-<id>-<domain>"},
		{`machine-qemu-1-vm.scope`, "a bare '-' at byte 4"},
		{`machine-qemu\x2d1\x2dvm\.scope`, `a '\' at byte`},
		{`machine-qemu\x2d1\x2dv\xzz.scope`, `"\\xzz" at byte`},
		{`machine-qemu\x2d1\x2dv\x2fm.scope`, "not a name libvirt makes"},              // '/'
		{`machine-qemu\x2d1\x2d\x2evm.scope`, "not a name libvirt makes"},              // leading '.'
		{`machine-qemu\x2d1\x2dvm\x2d\x2dx.scope`, "not a name libvirt makes"},         // "--"
		{`machine-qemu\x2d1\x2dv\x00m.scope`, "not a name libvirt makes"},              // NUL
		{"machine-qemu\\x2d1\\x2d" + strings.Repeat("a", 60) + ".scope", "not a name"}, // over 64
		{"machine-" + strings.Repeat("a", 300) + ".scope", "longer than a unit name"},
	} {
		_, err := ParseLibvirtScope(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "is not a libvirt QEMU domain's scope") {
			t.Errorf("%.80s: %v, want an error saying %q", tc.dir, err, tc.why)
		}
	}
}

// The machine name libvirt makes of a domain's name, and the scope found
// for it: names with characters libvirt drops still find their domain.
func TestLibvirtMachineName(t *testing.T) {
	for _, tc := range []struct {
		id           int
		domain, want string
	}{
		{1, "vm1", "qemu-1-vm1"},
		{7, "web_front end", "qemu-7-webfrontend"},
		{3, "..--a..b--c..", "qemu-3-a.b-c"},
		{3, "ünïcode-vm", "qemu-3-ncode-vm"},
		{12, strings.Repeat("x", 100), "qemu-12-" + strings.Repeat("x", 56)},
		{12, strings.Repeat("x", 55) + ".y", "qemu-12-" + strings.Repeat("x", 55)},
	} {
		if got := LibvirtMachineName(tc.id, tc.domain); got != tc.want {
			t.Errorf("%d %q: %q, want %q", tc.id, tc.domain, got, tc.want)
		}
	}
	m, err := ParseLibvirtScope(`machine-qemu\x2d7\x2dwebfrontend.scope`)
	if err != nil || !m.Is("web_front end") || !m.Is("webfrontend") || m.Is("web") || m.Is("webfrontend2") {
		t.Errorf("%+v %v: Is answers wrong", m, err)
	}
}

func TestParseLibvirtThreads(t *testing.T) {
	got, err := ParseLibvirtThreads([]string{"vcpu1", "emulator", "vcpu0", "iothread1", "vcpu10", "cgroup.procs"})
	if err != nil || !got.Emulator || !slices.Equal(got.VCPUs, []int{0, 1, 10}) {
		t.Errorf("%+v %v", got, err)
	}
	for _, tc := range []struct {
		names []string
		why   string
	}{
		{nil, "has neither emulator nor vcpuN cgroups"},
		{[]string{"vcpu0"}, "has no emulator cgroup"},
		{[]string{"emulator", "iothread1"}, "has no vcpuN cgroup"},
		{[]string{"emulator", "vcpu01"}, `"vcpu01": not a vCPU's cgroup`},
		{[]string{"emulator", "vcpu-1"}, `"vcpu-1": not a vCPU's cgroup`},
		{[]string{"emulator", "vcpu99999999999999999999"}, "not a vCPU's cgroup"},
		{make([]string, maxLibvirtChildren+1), "more than"},
	} {
		if _, err := ParseLibvirtThreads(tc.names); err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%.60q: %v, want %q", tc.names, err, tc.why)
		}
	}
}

// FuzzParseLibvirtScope: any directory name is a machine whose name libvirt
// could have made (and that is that domain's), or an error of bounded
// length, in bounded time.
func FuzzParseLibvirtScope(f *testing.F) {
	for _, s := range []string{`machine-qemu\x2d1\x2dvm1.scope`, `machine-qemu\x2d1\x2dv\x2dm.scope`,
		`machine-qemu\x2d1\x2dvm\x.scope`, `machine-qemu\x2d1\x2d\x2e.scope`, "machine-.scope", "machine.slice"} {
		f.Add(s)
	}
	fuzzseed.Add(f, func(s string) string { return `machine-qemu\x2d1\x2d` + s + ".scope" })
	f.Fuzz(func(t *testing.T, dir string) {
		var m LibvirtMachine
		var err error
		fuzzseed.Timed(t, "ParseLibvirtScope", func() { m, err = ParseLibvirtScope(dir) })
		if err != nil {
			fuzzseed.CheckError(t, err, "is not a libvirt QEMU domain's scope")
			return
		}
		if !m.Is(m.Name) || len(m.Name) > maxMachineName || m.ID < 0 {
			t.Fatalf("%q: %+v is not a domain's machine libvirt would name so", dir, m)
		}
	})
}

// FuzzParseLibvirtThreads: any directory listing is bounded threads or an
// error.
func FuzzParseLibvirtThreads(f *testing.F) {
	f.Add("vcpu0 vcpu1 emulator")
	f.Add("emulator vcpu99999999999999999999")
	fuzzseed.Add(f, func(s string) string { return "emulator vcpu" + s })
	f.Fuzz(func(t *testing.T, listing string) {
		var th LibvirtThreads
		var err error
		fuzzseed.Timed(t, "ParseLibvirtThreads", func() { th, err = ParseLibvirtThreads(strings.Fields(listing)) })
		if err != nil {
			fuzzseed.CheckError(t, err)
			return
		}
		if !th.Emulator || len(th.VCPUs) == 0 || len(th.VCPUs) > MaxLibvirtVCPUs || !slices.IsSorted(th.VCPUs) {
			t.Fatalf("%.80q: %+v", listing, th)
		}
	})
}

package workload

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// libvirt's own cgroups (no machined): the machine name with the driver's
// suffix, read as strictly as the scope's.
func TestParseLibvirtGroup(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want LibvirtMachine
	}{
		{"qemu-1-vm1.libvirt-qemu", LibvirtMachine{"qemu", 1, "vm1"}},
		{"qemu-42-web-front.db.libvirt-qemu", LibvirtMachine{"qemu", 42, "web-front.db"}},
	} {
		got, err := ParseLibvirtGroup(tc.dir)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.dir, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ dir, why string }{
		{"machine.slice", "want qemu-<id>-<domain>.libvirt-qemu"},
		{"qemu-1-vm.libvirt-lxc", "want qemu-<id>-<domain>.libvirt-qemu"},
		{"lxc-1-ct.libvirt-qemu", "want the machine name qemu-<id>-<domain>"},
		{"qemu-01-vm.libvirt-qemu", "want the machine name qemu-<id>-<domain>"},
		{"qemu-1-.libvirt-qemu", "want the machine name qemu-<id>-<domain>"},
		{"qemu-1-v/m.libvirt-qemu", "not a name libvirt makes"},
		{"qemu-1-vm--x.libvirt-qemu", "not a name libvirt makes"},
		{"qemu-1-\x1b[31mvm.libvirt-qemu", "not a name libvirt makes"},
		{"qemu-1-" + strings.Repeat("a", 60) + ".libvirt-qemu", "not a name libvirt makes"},
		{strings.Repeat("a", 300) + ".libvirt-qemu", "longer than a machine's cgroup name"},
	} {
		_, err := ParseLibvirtGroup(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "is not a libvirt QEMU domain's cgroup") {
			t.Errorf("%.80q: %v, want an error saying %q", tc.dir, err, tc.why)
		}
	}
	for _, l := range LibvirtLayouts {
		if l.Parent == LibvirtPartition && (l.ThreadsOf("machine/x") != "machine/x") {
			t.Errorf("libvirt's own layout keeps the threads' cgroups below the domain's: %+v", l)
		}
	}
}

// FuzzParseLibvirtGroup: any directory name is a machine whose name libvirt
// could have made, or an error of bounded length, in bounded time.
func FuzzParseLibvirtGroup(f *testing.F) {
	for _, s := range []string{"qemu-1-vm1.libvirt-qemu", "qemu-1-v-m.libvirt-qemu", "qemu-1-.vm.libvirt-qemu", ".libvirt-qemu", "machine"} {
		f.Add(s)
	}
	fuzzseed.Add(f, func(s string) string { return "qemu-1-" + s + ".libvirt-qemu" })
	f.Fuzz(func(t *testing.T, dir string) {
		var m LibvirtMachine
		var err error
		fuzzseed.Timed(t, "ParseLibvirtGroup", func() { m, err = ParseLibvirtGroup(dir) })
		if err != nil {
			fuzzseed.CheckError(t, err, "is not a libvirt QEMU domain's cgroup")
			return
		}
		if !m.Is(m.Name) || len(m.Name) > maxMachineName || m.ID < 0 {
			t.Fatalf("%q: %+v is not a domain's machine libvirt would name so", dir, m)
		}
	})
}

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// domainCgroups writes a v2 cgroup tree with libvirt domain "web-front"
// (id 3): QEMU, pid 4242, in its emulator cgroup, its vCPU threads' cgroups
// naming it again, and an empty scope.
func domainCgroups(t *testing.T, parts ...string) string {
	t.Helper()
	return domainCgroupsAt(t, filepath.Join("machine.slice", `machine-qemu\x2d3\x2dweb\x2dfront.scope`), parts...)
}

// domainCgroupsAt is domainCgroups with the domain's cgroup at rel.
func domainCgroupsAt(t *testing.T, rel string, parts ...string) string {
	t.Helper()
	root := t.TempDir()
	scope := filepath.Join(root, rel)
	for _, rel := range parts {
		dir := filepath.Join(scope, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		procs := "4242\n"
		if rel == "." || rel == "libvirt" {
			procs = ""
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(procs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A libvirt domain is measured by its scope and its threads' cgroups, each
// process once; a command name by every process of that name.
func TestNumastatByName(t *testing.T) {
	sys := fixtureTree(t, fixture.Intel2S96C.Name)
	proc := procFixture(t)
	whole := domainCgroups(t, ".", "libvirt", "libvirt/emulator", "libvirt/vcpu0", "libvirt/vcpu1")
	common := []string{"--sysfs-root", sys, "--proc-root", proc, "--cgroup-version", "v2"}
	for _, tc := range []struct {
		args  []string
		label string
	}{
		{[]string{"--libvirt-domain", "web-front", "--cgroup-root", whole}, `libvirt domain web-front (machine.slice/machine-qemu\x2d3\x2dweb\x2dfront.scope)`},
		{[]string{"--libvirt-domain", "web--front", "--cgroup-root", whole}, `libvirt domain web--front (machine.slice/machine-qemu\x2d3\x2dweb\x2dfront.scope)`},
		{[]string{"--comm", "redis-server"}, "command redis-server"},
		// libvirt's own layout, where no machined made the scope.
		{[]string{"--libvirt-domain", "web-front", "--cgroup-root", domainCgroupsAt(t, "machine/qemu-3-web-front.libvirt-qemu", ".", "emulator", "vcpu0")},
			"libvirt domain web-front (machine/qemu-3-web-front.libvirt-qemu)"},
	} {
		out, err := runLocus(t, append(append([]string{"numastat"}, tc.args...), common...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for _, want := range []string{"for " + tc.label + "\n", "Node 0", "Node 1", "local ratio 6%", "296210 remote pages", "1 process(es)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, want, out)
			}
		}
	}
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--libvirt-domain", "web-front", "--comm", "qemu-kvm"}, true, "give exactly one of"},
		{[]string{"--libvirt-domain", "a/b"}, true, `--libvirt-domain "a/b": a name has no '/'`},
		{[]string{"--libvirt-domain", strings.Repeat("a", 256)}, true, "--libvirt-domain: 256 bytes, more than 255"},
		{[]string{"--comm", "qemu-system-x86_64"}, true, "--comm: 18 bytes, more than 15"},
		{[]string{"--comm", "a\x1bb"}, true, "control character"},
		{[]string{"--comm", "qemu-kvm"}, false, `no process of command name "qemu-kvm"`},
		{[]string{"--libvirt-domain", "db", "--cgroup-root", whole}, false, `libvirt domain "db" is not running: no cgroup of it under machine.slice`},
		{[]string{"--libvirt-domain", "web-front", "--cgroup-root", domainCgroups(t, ".", "libvirt", "libvirt/vcpu0")}, false,
			"the domain's libvirt sub-tree has no emulator cgroup"},
	} {
		_, err := runLocus(t, append(append([]string{"numastat"}, tc.args...), common...)...)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ue) != tc.usage {
			t.Errorf("%.80v: error %v (usage %v), want %q (usage %v)", tc.args, err, errors.As(err, &ue), tc.want, tc.usage)
		}
	}
}

// FuzzCheckName: a name --libvirt-domain or --comm accepts is bounded,
// valid UTF-8, and holds no '/' or control character.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"qemu-kvm", "web-front", "a/b", "a\x1bb", "\xff", "", strings.Repeat("x", 16), "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkName("comm", name, maxComm) != nil {
			return
		}
		if len(name) > maxComm || strings.ContainsAny(name, "/\x00\n\x7f") || !utf8.ValidString(name) {
			t.Fatalf("accepted %q", name)
		}
	})
}

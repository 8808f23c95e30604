package hostsource

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
)

// noWriter fails the test if anything is created or moved: a libvirt
// domain's scope is libvirt's, only written in place by the executor.
type noWriter struct{ t *testing.T }

func (w noWriter) EnsureCgroup(rel string) ([]string, error) {
	w.t.Errorf("created %s for a libvirt domain", rel)
	return nil, nil
}
func (w noWriter) AddProcs(rel string, _ []int) (cgroup.ProcsReport, error) {
	w.t.Errorf("moved processes into %s for a libvirt domain", rel)
	return cgroup.ProcsReport{}, nil
}

// libvirtTree makes a fixture cgroup root with machine.slice as libvirt
// lays it out (under cpuset/ on v1) and returns a Preparer reading it.
func libvirtTree(t *testing.T, v cgroup.Version, dirs ...string) *Preparer {
	t.Helper()
	root := t.TempDir()
	base := root
	if v == cgroup.V1 {
		base = filepath.Join(root, "cpuset")
	}
	for _, d := range append([]string{"machine.slice"}, dirs...) {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h, err := cgroup.Open(root, v)
	if err != nil {
		t.Fatal(err)
	}
	return NewPreparer(Options{Procs: procfs.New(""), Cgroups: h, Writer: noWriter{t},
		Exists: func(string) bool { return true }, Sup: &fakeSup{}, Save: func(string, state.Workload) {},
		Events: &fakeEvents{}})
}

const webScope = `machine.slice/machine-qemu\x2d3\x2dweb\x2dfront.scope`

func TestLibvirtDomainAdoptsItsScope(t *testing.T) {
	cfg := &hostconfig.HostConfig{CgroupParent: "locus.slice"}
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		p := libvirtTree(t, v,
			webScope+"/libvirt/vcpu0", webScope+"/libvirt/vcpu1", webScope+"/libvirt/emulator",
			`machine.slice/machine-qemu\x2d4\x2dweb.scope/libvirt/vcpu0`, `machine.slice/machine-qemu\x2d4\x2dweb.scope/libvirt/emulator`,
			`machine.slice/machine-lxc\x2d9\x2dweb_front.scope`, "machine.slice/not-a-scope")
		for _, domain := range []string{"web-front", "web--front"} { // libvirt keeps one of the two dashes
			spec := hostconfig.Workload{Name: "vm", Match: &hostconfig.Match{LibvirtDomain: domain}}
			cg, below := p.CgroupPath(cfg, spec)
			want := []string{webScope + "/libvirt", webScope + "/libvirt/emulator", webScope + "/libvirt/vcpu0", webScope + "/libvirt/vcpu1"}
			if cg != webScope || !slices.Equal(below, want) {
				t.Fatalf("v%d %s: cgroup %q below %q, want the domain's scope %s and %q", v, domain, cg, below, webScope, want)
			}
			ready, probs := p.Prepare(spec, cg, &state.Workload{})
			if !ready || len(probs) != 0 {
				t.Errorf("v%d %s: ready %v, problems %v", v, domain, ready, probs)
			}
		}
		other := hostconfig.Workload{Name: "db", Match: &hostconfig.Match{Comm: "x", UID: new(int)}}
		if cg, below := p.CgroupPath(cfg, other); cg != "locus.slice/db" || below != nil {
			t.Errorf("a process match: cgroup %q, want its own under the parent", cg)
		}
	}
}

// A domain that is not running, or whose tree is missing parts, is a
// problem naming the domain and why, with nothing written or created.
func TestLibvirtDomainNotFound(t *testing.T) {
	cfg := &hostconfig.HostConfig{CgroupParent: "locus.slice"}
	for _, tc := range []struct {
		name string
		dirs []string
		why  string
	}{
		{"not running", []string{`machine.slice/machine-qemu\x2d4\x2dweb.scope/libvirt/emulator`}, `libvirt domain "web-front" is not running: no cgroup of it under machine.slice`},
		{"no libvirt sub-tree", []string{webScope}, "has no libvirt sub-tree"},
		{"no emulator", []string{webScope + "/libvirt/vcpu0"}, "has no emulator cgroup"},
		{"no vCPU", []string{webScope + "/libvirt/emulator"}, "has no vcpuN cgroup"},
		{"a hostile vCPU", []string{webScope + "/libvirt/emulator", webScope + "/libvirt/vcpu\x1b"}, `"vcpu\x1b": not a vCPU's cgroup`},
	} {
		for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
			p := libvirtTree(t, v, tc.dirs...)
			spec := hostconfig.Workload{Name: "vm", Match: &hostconfig.Match{LibvirtDomain: "web-front"}}
			cg, below := p.CgroupPath(cfg, spec)
			if cg != domainNotRunning || below != nil {
				t.Errorf("%s v%d: cgroup %q, want %q", tc.name, v, cg, domainNotRunning)
			}
			ready, probs := p.Prepare(spec, cg, &state.Workload{})
			if ready || len(probs) != 1 || probs[0].Reason != "LibvirtDomainNotFound" || !strings.Contains(probs[0].Message, tc.why) ||
				!strings.HasSuffix(probs[0].Message, "; nothing written") {
				t.Errorf("%s v%d: ready %v, problems %+v; want one saying %q", tc.name, v, ready, probs, tc.why)
			}
		}
	}
	// Without machine.slice at all (no libvirt on the host).
	p := NewPreparer(Options{Cgroups: mustOpen(t, t.TempDir()), Writer: noWriter{t}})
	spec := hostconfig.Workload{Name: "vm", Match: &hostconfig.Match{LibvirtDomain: "web"}}
	cg, _ := p.CgroupPath(cfg, spec)
	if ready, probs := p.Prepare(spec, cg, &state.Workload{}); ready || len(probs) != 1 ||
		!strings.Contains(probs[0].Message, "no machine.slice nor machine to find it in") {
		t.Errorf("no machine.slice: %v %+v", ready, probs)
	}
}

func mustOpen(t *testing.T, root string) *cgroup.Hierarchy {
	t.Helper()
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Where libvirt made the domain's cgroup itself (no machined), the domain
// is found in its machine partition, the threads right below it; a tree
// missing parts there is a problem as under machine.slice.
func TestLibvirtDomainInLibvirtsOwnLayout(t *testing.T) {
	const own = "machine/qemu-5-web-front.libvirt-qemu"
	cfg := &hostconfig.HostConfig{CgroupParent: "locus.slice"}
	spec := hostconfig.Workload{Name: "vm", Match: &hostconfig.Match{LibvirtDomain: "web-front"}}
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		p := libvirtTree(t, v, own+"/emulator", own+"/vcpu1", own+"/vcpu0", "machine/qemu-6-web.libvirt-qemu/emulator", "machine/lxc-7-web-front.libvirt-lxc")
		cg, below := p.CgroupPath(cfg, spec)
		want := []string{own + "/emulator", own + "/vcpu0", own + "/vcpu1"}
		if cg != own || !slices.Equal(below, want) {
			t.Fatalf("v%d: cgroup %q below %q, want %s and %q", v, cg, below, own, want)
		}
		if ready, probs := p.Prepare(spec, cg, &state.Workload{}); !ready || len(probs) != 0 {
			t.Errorf("v%d: ready %v, problems %v", v, ready, probs)
		}
		p = libvirtTree(t, v, own+"/vcpu0", own+"/vcpu\x1b[2J")
		if cg, _ := p.CgroupPath(cfg, spec); cg != domainNotRunning {
			t.Errorf("v%d: a hostile thread's cgroup: cgroup %q, want none", v, cg)
		}
		if ready, probs := p.Prepare(spec, domainNotRunning, &state.Workload{}); ready || len(probs) != 1 ||
			!strings.Contains(probs[0].Message, `not a vCPU's cgroup`) || !strings.Contains(probs[0].Message, own) {
			t.Errorf("v%d: a hostile thread's cgroup: ready %v, problems %+v", v, ready, probs)
		}
	}
}

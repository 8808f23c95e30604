package decide

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// twoNodeSMT2 is two nodes of four two-thread cores: core c is CPUs c and
// c+8, node 0 cores 0-3 (CPUs 0-3, 8-11), node 1 cores 4-7.
var twoNodeSMT2 = fixture.Shape{Name: "2s-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}

const vmScope = `machine.slice/machine-qemu\x2d3\x2dvm.scope`

// domain is a libvirt domain of vcpus vCPUs holding cpus exclusive CPUs,
// its threads' cgroups pinned apart when dedicated.
func domain(cpus, vcpus int, dedicated bool) workload.Workload {
	sub := vmScope + "/libvirt"
	below := []string{sub, sub + "/emulator"}
	threads := &workload.DedicatedThreads{Emulator: sub + "/emulator"}
	for i := range vcpus {
		cg := fmt.Sprintf("%s/vcpu%d", sub, i)
		below = append(below, cg)
		threads.VCPUs = append(threads.VCPUs, cg)
	}
	w := workload.Workload{Name: "vm", Cgroup: vmScope, Containers: []workload.Container{{Name: "vm", Cgroup: vmScope}},
		Unlisted: below, CPU: workload.CPUNeed{Exclusive: true, CPUs: cpus, Policy: cpualloc.FullPCPUsThenThreads},
		MemQoS: memqos.Workload{Class: memqos.ClassLS}}
	if dedicated {
		w.Dedicated = threads
	}
	return w
}

// cpusets are the cpuset files ops write, by cgroup relative to the scope:
// "cpus mems".
func cpusets(ops []cgroupfile.Op) map[string]string {
	cpus, mems := map[string]string{}, map[string]string{}
	for _, op := range ops {
		rel, ok := strings.CutPrefix(op.Cgroup, vmScope)
		if !ok {
			continue
		}
		switch op.Knob {
		case cgroupfile.CPUSetCPUs:
			cpus["."+rel] = op.Value
		case cgroupfile.CPUSetMems:
			mems["."+rel] = op.Value
		}
	}
	out := map[string]string{}
	for cg := range maps.Keys(cpus) {
		out[cg] = cpus[cg] + " " + mems[cg]
	}
	for cg := range maps.Keys(mems) {
		if _, ok := cpus[cg]; !ok {
			out[cg] = "? " + mems[cg]
		}
	}
	return out
}

func TestComputeDedicatedVCPUs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		w     workload.Workload
		want  map[string]string
		probs []string
	}{
		{"shared: every thread on the domain's CPUs", domain(8, 4, false), map[string]string{
			".": "0-3,8-11 0", "./libvirt": "0-3,8-11 0", "./libvirt/emulator": "0-3,8-11 0",
			"./libvirt/vcpu0": "0-3,8-11 0", "./libvirt/vcpu1": "0-3,8-11 0", "./libvirt/vcpu2": "0-3,8-11 0", "./libvirt/vcpu3": "0-3,8-11 0"}, nil},
		{"dedicated, 8 CPUs for 4 vCPUs: a core each, the emulator in the shared pool", domain(8, 4, true), map[string]string{
			".": "0-15 0", "./libvirt": "0-15 0", "./libvirt/emulator": "4-7,12-15 0",
			"./libvirt/vcpu0": "0,8 0", "./libvirt/vcpu1": "1,9 0", "./libvirt/vcpu2": "2,10 0", "./libvirt/vcpu3": "3,11 0"}, nil},
		{"dedicated, 6 CPUs for 2 vCPUs: the emulator on the core left", domain(6, 2, true), map[string]string{
			".": "0-2,8-10 0", "./libvirt": "0-2,8-10 0", "./libvirt/emulator": "2,10 0",
			"./libvirt/vcpu0": "0,8 0", "./libvirt/vcpu1": "1,9 0"}, nil},
		{"dedicated, 6 CPUs for 4 vCPUs: a problem, nothing written", domain(6, 4, true), map[string]string{},
			[]string{"DedicatedVCPUsNotFit: cpuPolicy dedicated: 4 vCPUs need 4 whole cores, and the workload's CPUs 0-2,8-10 hold 3; " +
				"raise resources.limits.cpu to a whole core per vCPU. The domain's cpusets are left as they are"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Topology: fixture.MustBuild(twoNodeSMT2), Workloads: []workload.Workload{tc.w}}
			d := Compute(in)
			var probs []string
			for _, p := range d.Problems {
				probs = append(probs, p.Reason+": "+p.Message)
			}
			if got := cpusets(d.Ops); !reflect.DeepEqual(got, tc.want) || !slices.Equal(probs, tc.probs) {
				t.Errorf("cpusets (cpus mems) %v, problems %q;\nwant %v, %q", got, probs, tc.want, tc.probs)
			}
			if shown := d.Workloads[0].ContainerCPUs; tc.w.Dedicated != nil && len(tc.probs) == 0 &&
				(shown["vcpu0"] != strings.Fields(tc.want["./libvirt/vcpu0"])[0] || shown["emulator"] != strings.Fields(tc.want["./libvirt/emulator"])[0]) {
				t.Errorf("status shows the threads' CPUs as %v", shown)
			}
			if again := Compute(in); !reflect.DeepEqual(again.Ops, d.Ops) {
				t.Errorf("deciding twice gives other ops")
			}
		})
	}
}

// A domain spread over both nodes keeps every thread's memory on both:
// guest memory is the whole VM's, whichever vCPU touches it.
func TestComputeDedicatedTwoNodes(t *testing.T) {
	d := Compute(Input{Topology: fixture.MustBuild(twoNodeSMT2), Workloads: []workload.Workload{domain(10, 4, true)}})
	got := cpusets(d.Ops)
	if len(d.Problems) != 0 {
		t.Fatalf("problems %v", d.Problems)
	}
	vcpus := cpuset.New()
	for i := range 4 {
		cs, mems, _ := strings.Cut(got[fmt.Sprintf("./libvirt/vcpu%d", i)], " ")
		set, err := cpuset.Parse(cs)
		if err != nil || set.Size() != 2 || mems != "0-1" || !vcpus.Intersection(set).IsEmpty() {
			t.Errorf("vcpu%d: %q (%v), want a core of its own and mems 0-1", i, got[fmt.Sprintf("./libvirt/vcpu%d", i)], err)
		}
		vcpus = vcpus.Union(set)
	}
	if e := got["./libvirt/emulator"]; !strings.HasSuffix(e, " 0-1") || strings.Contains(e, "?") {
		t.Errorf("emulator: %q, want the domain's CPUs left and mems 0-1", e)
	}
}

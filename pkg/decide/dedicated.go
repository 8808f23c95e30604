package decide

import (
	"cmp"
	"fmt"
	"path"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// dedicated is how a libvirt domain under a dedicated CPU policy
// (workload.Workload.Dedicated) divides its CPUs among its threads. Each
// vCPU's cgroup gets one whole core of the workload's CPUs, all of its
// threads: the vCPU is the only thread there, so the core's siblings stay
// free of anything else. The emulator's cgroup gets the workload's CPUs
// left over, or, when the vCPUs take them all, the shared pool: QEMU's
// main loop and I/O then never take a vCPU's core, which is the point of
// dedicating it. Every one of them keeps cpuset.mems at the workload's
// node(s), so guest memory stays next to the vCPUs.
type dedicated struct {
	on bool
	// leave: the vCPUs do not fit the workload's whole cores; no cpuset
	// of the domain is written (a problem says why).
	leave bool
	// parent is what the domain's own cgroups (its scope, its libvirt
	// sub-tree) get: on cgroup v1 a parent's cpuset must hold its
	// children's, so the shared pool too when the emulator runs there.
	parent cpuFacts
	ops    []cgroupfile.Op
	pinned map[string]bool // the thread cgroups ops write
	// shown is each thread's CPUs by its cgroup's name (vcpu0, emulator),
	// for the workload's status beside a pod's containers' parts.
	shown map[string]string
}

// dedicatedOf divides the CPUs w holds (its assignment in as) among its
// threads, where unpinned (the kubelet pinned none of its cgroups); for a
// workload without dedicated vCPUs or CPUs of its own, nothing but parent,
// which is vm, the facts of its CPUs, as for any workload.
func dedicatedOf(t *topology.Topology, w workload.Workload, as map[string]workload.Assignment, unpinned bool, vm, shared cpuFacts, sharedCPUs cpuset.CPUSet) (dedicated, []workload.Problem) {
	a, held := as[w.Name]
	if w.Dedicated == nil || !held || !unpinned {
		return dedicated{parent: vm}, nil
	}
	cores := wholeCores(t, a.CPUs)
	n := len(w.Dedicated.VCPUs)
	if len(cores) < n {
		return dedicated{on: true, leave: true, parent: vm}, []workload.Problem{{Workload: w.Name, Reason: "DedicatedVCPUsNotFit",
			Message: fmt.Sprintf("cpuPolicy dedicated: %d vCPUs need %d whole cores, and the workload's CPUs %s hold %d; raise resources.limits.cpu to a whole core per vCPU. The domain's cpusets are left as they are",
				n, n, a.CPUs, len(cores))}}
	}
	d := dedicated{on: true, parent: vm, pinned: map[string]bool{}, shown: map[string]string{}}
	used := cpuset.New()
	for i, cg := range w.Dedicated.VCPUs {
		used = used.Union(cores[i])
		d.ops = append(d.ops, PodCPUSet{Mems: vm.mems, CPUs: cores[i].String()}.Ops(cg)...)
		d.pinned[cg], d.shown[path.Base(cg)] = true, cores[i].String()
	}
	emulator := PodCPUSet{Mems: vm.mems, CPUs: a.CPUs.Difference(used).String()}
	switch {
	case emulator.CPUs != "":
	case !sharedCPUs.IsEmpty():
		emulator.CPUs, emulator.Pool = shared.list, "shared"
		d.parent.list = a.CPUs.Union(sharedCPUs).String()
	default:
		emulator.CPUs = a.CPUs.String() // no pool left: it shares the vCPUs' cores
	}
	d.ops = append(d.ops, emulator.Ops(w.Dedicated.Emulator)...)
	d.pinned[w.Dedicated.Emulator], d.shown[path.Base(w.Dedicated.Emulator)] = true, emulator.CPUs
	return d, nil
}

// shownOr is what the workload's status shows of its threads' CPUs: each
// thread's, else parts (a pod's containers').
func (d dedicated) shownOr(parts map[string]string) map[string]string {
	if len(d.shown) == 0 {
		return parts
	}
	return d.shown
}

// others are the cgroups of list the workload's own cpuset goes to: none
// when the domain is left alone, and not the threads pinned apart.
func (d dedicated) others(list []string) []string {
	if d.leave {
		return nil
	}
	if !d.on {
		return list
	}
	out := make([]string, 0, len(list))
	for _, cg := range list {
		if !d.pinned[cg] {
			out = append(out, cg)
		}
	}
	return out
}

// wholeCores are the cores all of whose CPUs are in set, each as its CPUs,
// by NUMA node and then by first CPU, so that vCPUs in order fill a node
// before the next.
func wholeCores(t *topology.Topology, set cpuset.CPUSet) []cpuset.CPUSet {
	type core struct {
		node  int
		cpus  []int
		whole bool
	}
	byCore := map[int]*core{}
	for _, c := range t.CPUs {
		k, ok := byCore[c.Core]
		if !ok {
			k = &core{node: c.NUMA, whole: true}
			byCore[c.Core] = k
		}
		k.cpus = append(k.cpus, c.ID)
		k.whole = k.whole && set.Contains(c.ID)
	}
	var cores []*core
	for _, k := range byCore {
		if k.whole {
			slices.Sort(k.cpus)
			cores = append(cores, k)
		}
	}
	slices.SortFunc(cores, func(a, b *core) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.cpus[0], b.cpus[0]))
	})
	out := make([]cpuset.CPUSet, len(cores))
	for i, k := range cores {
		out[i] = cpuset.New(k.cpus...)
	}
	return out
}

package decide

import (
	"fmt"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Input is everything one decision depends on.
type Input struct {
	Topology         *topology.Topology
	Reserved, BEPool cpuset.CPUSet
	UnrestrictedMems bool
	Workloads        []workload.Workload
	Previous         map[string]workload.Assignment
	// Kubelet is what the kubelet's CPU manager holds (kubelet.go).
	Kubelet       Kubelet
	MemQoS        memqos.Config
	Namespaces    memqos.NamespaceConfig
	MemQoSOptions memqos.Options
	CPUQoS        cpuqos.Config
	CPUKernel     cpuqos.Kernel
	CPUBurst      cpuburst.NodeConfig
	// BurstKernel says cgroups have cpu.cfs_burst_us (v2 cpu.max.burst).
	BurstKernel bool
	// Moves says what may move to make room (moves.go).
	Moves Moves
}

// WorkloadState is what the decision gives one workload, for status and metrics.
type WorkloadState struct {
	Name      string        `json:"name"`
	Cgroup    string        `json:"cgroup"`
	Pool      string        `json:"pool"` // exclusive, static-burst, shared, be or kubelet
	CPUs      string        `json:"cpus"`
	Mems      string        `json:"mems"`
	NUMANodes []int         `json:"numaNodes"`
	MemQoS    memqos.Values `json:"-"`
	MemQoSOn  bool          `json:"memoryQOS"`
	MemQoSWhy string        `json:"memoryQOSReason"`
	CPUQoSWhy string        `json:"cpuQOSReason,omitempty"`
	// CoreIsolation asks for a core scheduling cookie of the workload's own,
	// which the agent gives its processes where the kernel has it.
	CoreIsolation    bool   `json:"coreIsolation,omitempty"`
	CoreIsolationWhy string `json:"coreIsolationReason,omitempty"`
	// CPUBurstWhy says what CPU Burst's burst buffer does for the workload;
	// QuotaBurstWhy what its CFS quota raise does, per container.
	CPUBurstWhy   string `json:"cpuBurstReason,omitempty"`
	QuotaBurstWhy string `json:"cfsQuotaBurstReason,omitempty"`
	// ContainerCPUs is each container's part of a container-scope pod's
	// CPUs (locus.io/cpu-scope: container), or each thread cgroup's of a
	// dedicated libvirt domain (vcpu0, emulator), as CPU lists.
	ContainerCPUs map[string]string `json:"containerCPUs,omitempty"`
	// MemoryByNode is, by NUMA node, the memory and huge pages the
	// workload's request holds there (none for a workload without CPUs of
	// its own, or without a request).
	MemoryByNode map[int]cpualloc.Memory `json:"memoryByNode,omitempty"`
}

// Desired is the decision: the files to hold, the files to restore, and why.
type Desired struct {
	Assignments map[string]workload.Assignment
	Pools       Pools
	Workloads   []WorkloadState
	Ops         []cgroupfile.Op
	Restores    []cgroupfile.Target
	Problems    []workload.Problem
	// Unlisted is, by pod cgroup, the cpuset a container of the pod that
	// its status does not name gets (unlistedCPUSet): the Ops write it into
	// the containers of Workload.Unlisted, and a container cgroup seen
	// appearing between two decisions gets it from here. A pod whose new
	// containers are left alone has no entry.
	Unlisted map[string]PodCPUSet
	// Balanced is, by cgroup, the cpuset the NUMA balancer's placements
	// gave (Observation.Balanced): a workload's cgroup, or a cgroup that is
	// no workload's (Pool "shared" where it got the whole pool). Released
	// are the cgroups of the second kind whose cpusets are restored.
	Balanced map[string]PodCPUSet
	Released []string
	// Moves are the workloads moved so that another fits, in the order
	// the planner made them.
	Moves []Move
}

// PodCPUSet is the cpuset every container of a pod gets, as cpuset files'
// text, and the shared pool it is, if any (cgroupfile.Op.Pool).
type PodCPUSet struct{ Mems, CPUs, Pool string }

// Ops write it into the container cgroups cgs: cpuset.mems before
// cpuset.cpus, so CPUs on another node find its memory allowed already.
func (p PodCPUSet) Ops(cgs ...string) []cgroupfile.Op {
	ops := make([]cgroupfile.Op, 0, 2*len(cgs))
	for _, cg := range cgs {
		ops = append(ops, cgroupfile.Op{Cgroup: cg, Knob: cgroupfile.CPUSetMems, Value: p.Mems, Pool: p.Pool},
			cgroupfile.Op{Cgroup: cg, Knob: cgroupfile.CPUSetCPUs, Value: p.CPUs, Pool: p.Pool})
	}
	return ops
}

// Compute decides the whole node. Workloads are handled in name order and
// every list it returns is sorted, so equal inputs give equal outputs.
func Compute(in Input) Desired {
	d, _ := compute(in, nil)
	return d
}

// compute is Compute reusing the QoS steps of the last decision (last, nil
// for none) where they read the same, and the steps it decided.
func compute(in Input, last *qosMemo) (Desired, *qosMemo) {
	ws := inNameOrder(in.Workloads)
	qos := newQoSSteps(in, last, len(ws))
	var d Desired
	kube := in.Kubelet
	reserved, needs, problems := kube.needs(in.Reserved, ws)
	problems = append(problems, nearDevices(in.Topology, ws, needs)...)
	var holds Holdings
	d.Assignments, holds, d.Moves, d.Problems = assign(in.Topology, reserved, kube, needs, in.Previous, in.Moves.movable(kube, ws), in.Moves.Resident)
	d.Problems = append(append(problems, d.Problems...), misaligned(in.Topology, needs, ws, d.Assignments)...)
	owned := kube.Owned(in.Topology.CPUSet())
	pools, poolProblems := computePools(in.Topology, reserved, owned, in.BEPool, d.Assignments)
	if kube.Unknown != "" {
		pools.Shared, pools.BE, poolProblems = cpuset.New(), cpuset.New(), nil
	}
	d.Pools, d.Problems = pools, append(d.Problems, poolProblems...)
	// Most workloads are on a pool: its list, mems and nodes are worked out
	// once, not once per workload and container.
	factsOf := func(s cpuset.CPUSet) cpuFacts {
		return cpuFacts{s.String(), Mems(in.Topology, s, in.UnrestrictedMems), in.Topology.NodesOf(s)}
	}
	sharedFacts, beFacts := factsOf(pools.Shared), factsOf(pools.BE)
	// Sized once: grown by appends, the lists were copied over and over,
	// which at hundreds of workloads was a tenth of a reconcile's bytes.
	d.Workloads = make([]WorkloadState, 0, len(ws))
	steps := qosStepsOf(qos, kube, ws)
	nOps, nRestores := opsSize(ws, steps)
	d.Ops, d.Restores = make([]cgroupfile.Op, 0, nOps), make([]cgroupfile.Target, 0, nRestores)
	for i, w := range ws {
		st := WorkloadState{Name: w.Name, Cgroup: w.Cgroup}
		cpus, facts := pools.Shared, sharedFacts
		// pool marks the cpuset ops whose value is a shared pool's
		// (cgroupfile.Op.Pool): "" for CPUs of the workload's own.
		st.Pool = "shared"
		pool := st.Pool
		spilled := false
		if a, ok := d.Assignments[w.Name]; ok {
			cpus, facts, st.Pool, pool = a.CPUs, factsOf(a.CPUs), "exclusive", ""
			// Memory spilled beyond the CPUs' nodes is allowed on its group.
			if spilled = len(a.MemNodes) > 0 && !slices.Equal(a.MemNodes, facts.nodes); spilled && !in.UnrestrictedMems {
				facts.mems = cpuset.New(a.MemNodes...).String()
			}
			st.MemoryByNode = holds[w.Name]
			if a.Policy == "static-burst" {
				st.Pool = "static-burst"
			}
		} else if w.BE {
			cpus, facts, st.Pool, pool = pools.BE, beFacts, "be", "be"
		}
		// A pod the kubelet pinned shows the kubelet's CPUs; its other
		// containers, if any, run in the shared pool.
		pinned := kube.pinnedContainers(w)
		shown := facts
		if len(pinned) > 0 {
			st.Pool = "kubelet"
			shown = factsOf(Kubelet{Pinned: map[string]map[string]cpuset.CPUSet{w.UID: pinned}}.Owned(cpuset.New()))
		}
		st.CPUs, st.Mems, st.NUMANodes = shown.list, shown.mems, slices.Clone(shown.nodes)
		if w.Terminating {
			st.MemQoSWhy = "terminating: nothing is written any more"
			d.Workloads = append(d.Workloads, st)
			continue
		}
		var parts map[string]cpuset.CPUSet
		if a, ok := d.Assignments[w.Name]; ok && len(pinned) == 0 {
			var probs []workload.Problem
			parts, probs = containerParts(in.Topology, w, a)
			d.Problems = append(d.Problems, probs...)
			st.ContainerCPUs = partLists(parts)
		}
		ded, probs := dedicatedOf(in.Topology, w, d.Assignments, len(pinned) == 0, facts, sharedFacts, pools.Shared)
		facts, d.Problems = ded.parent, append(d.Problems, probs...)
		st.ContainerCPUs = ded.shownOr(st.ContainerCPUs)
		if cpus.IsEmpty() && kube.Unknown == "" && len(pinned) == 0 {
			// An empty list is no cpuset the kernel accepts: the workload
			// keeps the CPUs it has (SharedPoolEmpty says why).
			d.Problems = append(d.Problems, workload.Problem{Workload: w.Name, Reason: "NoCPUs", Message: fmt.Sprintf("the %s pool has no CPU left; cpuset.cpus and cpuset.mems are left as they are", st.Pool)})
		}
		for _, c := range w.Containers {
			if cpus.IsEmpty() || ded.leave {
				break
			}
			if _, ok := pinned[c.Name]; ok {
				continue // the kubelet's
			}
			cf, cp := facts, pool
			if p, ok := parts[c.Name]; ok {
				cf, cp = factsOf(p), "" // a container-scope pod's container: its part
				if spilled {
					cf.mems = facts.mems
				}
			}
			// mems before cpus, so CPUs moving to another node find its
			// memory allowed already. Memory the kubelet's memory manager
			// bound stays where it put it.
			if _, ok := kube.MemPinned[w.UID][c.Name]; !ok || w.UID == "" {
				d.Ops = append(d.Ops, cgroupfile.Op{Cgroup: c.Cgroup, Knob: cgroupfile.CPUSetMems, Value: cf.mems, Pool: cp})
			}
			d.Ops = append(d.Ops, cgroupfile.Op{Cgroup: c.Cgroup, Knob: cgroupfile.CPUSetCPUs, Value: cf.list, Pool: cp})
		}
		if p, ok := unlistedCPUSet(w, cpus, facts, pool, len(pinned) > 0 || (w.UID != "" && len(kube.MemPinned[w.UID]) > 0) || kube.mayPin(w)); ok {
			if d.Unlisted == nil {
				d.Unlisted = make(map[string]PodCPUSet, len(ws)) // most pods have one: grown, it was rehashed
			}
			d.Unlisted[w.Cgroup] = p
			d.Ops = append(d.Ops, p.Ops(ded.others(w.Unlisted)...)...)
		}
		d.Ops = append(d.Ops, ded.ops...)
		// The QoS files read nothing of the CPUs' allocation: a workload
		// unchanged since the last decision keeps its step (qosmemo.go).
		q := steps[i]
		q.show(&st)
		d.Ops, d.Restores, d.Problems = append(d.Ops, q.ops...), append(d.Restores, q.restores...), append(d.Problems, q.problems...)
		d.Workloads = append(d.Workloads, st)
	}
	return d, qos.next
}

// qosStepsOf is the QoS step of each workload of ws but those terminating
// (nil), decided before their cpusets so that the lists they go into are
// sized from them.
func qosStepsOf(qos *qosSteps, kube Kubelet, ws []workload.Workload) []*qosStep {
	steps := make([]*qosStep, len(ws))
	for i := range ws {
		if !ws[i].Terminating {
			steps[i] = qos.of(&ws[i], kube.pinnedContainers(ws[i]))
		}
	}
	return steps
}

// opsSize is how many writes and restores Compute decides for ws, whose
// QoS steps are steps: the steps' own exactly, and a cpuset's two files per
// container and per cgroup of the pod's containers not listed, a pair over.
// Every restore is a QoS step's: the estimate of 4 per pod and 4 per
// container fell short of pods whose memory QoS files are given back on the
// pod and its containers, and the list, grown, was copied whole (the appends
// that grew it were a sixth of the decision's bytes under the 300-pod
// churn), while the ops' estimate was often thrice what was decided.
func opsSize(ws []workload.Workload, steps []*qosStep) (ops, restores int) {
	for i, w := range ws {
		ops += 2 + 2*len(w.Containers) + 2*len(w.Unlisted)
		if q := steps[i]; q != nil {
			ops, restores = ops+len(q.ops), restores+len(q.restores)
		}
	}
	return ops, restores
}

// unlistedCPUSet is the cpuset the containers of a pod not named by its
// status (Workload.Unlisted, or seen appearing since) get: the cpuset every
// container of the pod gets, its pool or CPUs. A container-scope pod's
// containers each get their own part, and the kubelet's managers pin
// containers by name (kubelet): neither pod's unnamed containers are
// written (ok false), the status path serves them.
func unlistedCPUSet(w workload.Workload, cpus cpuset.CPUSet, f cpuFacts, pool string, kubelet bool) (PodCPUSet, bool) {
	if cpus.IsEmpty() || kubelet || len(w.CPU.Containers) > 0 {
		return PodCPUSet{}, false
	}
	return PodCPUSet{Mems: f.mems, CPUs: f.list, Pool: pool}, true
}

package decide

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// Kubelet is what the kubelet's CPU manager holds on the node, as its
// checkpoint and configuration say (read by the shell with pkg/kubelet).
// With the static policy the kubelet pins the integer CPUs of Guaranteed
// pods itself and reconciles their cpusets: those CPUs are the kubelet's,
// never given to a workload of Locus, and those containers' cgroups are
// never written by Locus. The zero value is a kubelet that pins nothing.
type Kubelet struct {
	Policy string // "none", "static", or "" when there is no checkpoint
	// Pinned are the CPUs the kubelet gave containers alone, by pod UID and
	// container name.
	Pinned map[string]map[string]cpuset.CPUSet
	// Unnamed are the CPUs of containers named by ID only (a v1 checkpoint).
	Unnamed cpuset.CPUSet
	// Unknown, when set, is why the checkpoint could not be read: every
	// CPU is then the kubelet's, and Locus writes no cpuset.
	Unknown string
	// Reserved is the kubelet's reservedSystemCPUs, the agent's reserved
	// CPUs when it was given none.
	Reserved cpuset.CPUSet
	// MemPinned are the NUMA nodes the kubelet's static memory manager
	// bound containers' memory to (cpuset.mems), by pod UID and container
	// name: Locus leaves those containers' cpuset.mems to the kubelet.
	MemPinned map[string]map[string]string
	// MemBlocks are the memory the static memory manager gave containers,
	// each on its nodes, in pod UID and container order: taken, as the
	// CPU manager's CPUs are. MemReserved is, by node, the memory the
	// kubelet keeps for the system (its machine state's systemReserved).
	MemBlocks   []MemBlock
	MemReserved map[int]uint64
}

// MemBlock is memory of some kinds that the kubelet gave one container on
// a group of nodes.
type MemBlock struct {
	Memory cpualloc.Memory
	Nodes  []int
}

// FromKubelet is what the decision needs of the kubelet's state, as
// pkg/kubelet read it. An unreadable CPU manager checkpoint is told by the
// decision itself (KubeletCheckpointUnreadable); the other files are told
// here, as problems of the node.
func FromKubelet(s kubelet.State) (Kubelet, []workload.Problem) {
	out := Kubelet{Reserved: s.Reserved(), Unnamed: cpuset.New()}
	var problems []workload.Problem
	for _, e := range s.Errors {
		if s.CPUUnknown && out.Unknown == "" {
			out.Unknown = e.String()
			continue
		}
		problems = append(problems, workload.Problem{Reason: "KubeletFileUnreadable", Message: e.String() + "; Locus goes on without it"})
	}
	if c := s.CPU; c != nil {
		out.Policy, out.Pinned = c.Policy, c.Assignments
		for _, set := range c.ByContainerID {
			out.Unnamed = out.Unnamed.Union(set)
		}
	}
	if m := s.Memory; m != nil && strings.EqualFold(m.Policy, "Static") {
		out.MemPinned = memPinned(m.Assignments)
		out.MemBlocks = memBlocks(m.Assignments)
	}
	if m := s.Memory; m != nil && len(m.SystemReserved) > 0 {
		out.MemReserved = m.SystemReserved
	}
	return out, problems
}

// memPinned is the nodes of each container's memory blocks, as the
// cpuset.mems list the kubelet writes for them.
func memPinned(as map[string]map[string][]kubelet.Block) map[string]map[string]string {
	out := map[string]map[string]string{}
	for uid, cs := range as {
		for name, blocks := range cs {
			var nodes []int
			for _, b := range blocks {
				nodes = append(nodes, b.Nodes...)
			}
			if len(nodes) == 0 {
				continue
			}
			if out[uid] == nil {
				out[uid] = map[string]string{}
			}
			out[uid][name] = cpuset.New(nodes...).String()
		}
	}
	return out
}

// memBlocks is the memory of every container's blocks, each block's kinds
// on its nodes (a block names one resource: memory or a huge page size).
func memBlocks(as map[string]map[string][]kubelet.Block) []MemBlock {
	var out []MemBlock
	for _, uid := range slices.Sorted(maps.Keys(as)) {
		for _, name := range slices.Sorted(maps.Keys(as[uid])) {
			for _, b := range as[uid][name] {
				var m cpualloc.Memory
				switch b.Resource {
				case "memory":
					m.Bytes = b.Bytes
				case "hugepages-2Mi":
					m.HugePages2Mi = b.Bytes
				case "hugepages-1Gi":
					m.HugePages1Gi = b.Bytes
				}
				if m != (cpualloc.Memory{}) && len(b.Nodes) > 0 {
					out = append(out, MemBlock{Memory: m, Nodes: slices.Clone(b.Nodes)})
				}
			}
		}
	}
	return out
}

// Owned is every CPU the kubelet holds alone, or every online CPU when its
// checkpoint could not be read.
func (k Kubelet) Owned(online cpuset.CPUSet) cpuset.CPUSet {
	if k.Unknown != "" {
		return online
	}
	out := k.Unnamed
	for _, cs := range k.Pinned {
		for _, set := range cs {
			out = out.Union(set)
		}
	}
	return out
}

// key is the kubelet's part of the decision's input, for the memo.
func (k Kubelet) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s", k.Policy, k.Unknown, k.Reserved, k.Unnamed)
	for _, uid := range slices.Sorted(maps.Keys(k.Pinned)) {
		for _, c := range slices.Sorted(maps.Keys(k.Pinned[uid])) {
			fmt.Fprintf(&b, "|%s/%s=%s", uid, c, k.Pinned[uid][c])
		}
	}
	for _, blk := range k.MemBlocks {
		fmt.Fprintf(&b, "|block %v %v", blk.Nodes, blk.Memory)
	}
	for _, id := range slices.Sorted(maps.Keys(k.MemReserved)) {
		fmt.Fprintf(&b, "|reserved %d=%d", id, k.MemReserved[id])
	}
	for _, uid := range slices.Sorted(maps.Keys(k.MemPinned)) {
		for _, c := range slices.Sorted(maps.Keys(k.MemPinned[uid])) {
			fmt.Fprintf(&b, "|mem %s/%s=%s", uid, c, k.MemPinned[uid][c])
		}
	}
	return b.String()
}

// reserved is the reserved CPUs in force: the agent's, else the kubelet's;
// the two disagreeing is a node-wide problem (the agent's win).
func (k Kubelet) reserved(agent cpuset.CPUSet) (cpuset.CPUSet, []workload.Problem) {
	if agent.IsEmpty() {
		return k.Reserved, nil
	}
	if k.Reserved.IsEmpty() || k.Reserved.Equals(agent) {
		return agent, nil
	}
	return agent, []workload.Problem{{Reason: "ReservedCPUsMismatch", Message: fmt.Sprintf(
		"--reserved-cpus is %q but the kubelet's reservedSystemCPUs is %q; Locus keeps %q out of its pools, the kubelet runs system daemons on %q",
		agent.String(), k.Reserved.String(), agent.String(), k.Reserved.String())}}
}

// needs are the workloads' CPU needs beside the kubelet, with the reserved
// CPUs in force and the problems that follow: a pod the kubelet pinned, or
// may yet pin (mayPin), needs nothing of Locus (KubeletPinned when it asked
// for CPUs all the same), and an unreadable checkpoint is told once for the
// node.
func (k Kubelet) needs(agentReserved cpuset.CPUSet, ws []workload.Workload) (cpuset.CPUSet, map[string]workload.CPUNeed, []workload.Problem) {
	reserved, problems := k.reserved(agentReserved)
	if k.Unknown != "" {
		problems = append(problems, workload.Problem{Reason: "KubeletCheckpointUnreadable", Message: "the kubelet's CPU manager checkpoint " +
			k.Unknown + "; every CPU is taken as the kubelet's: Locus pins no pod and writes no cpuset until it reads again"})
	}
	needs := map[string]workload.CPUNeed{}
	for _, w := range ws {
		needs[w.Name] = w.CPU
		if w.UID != "" && len(k.MemPinned[w.UID]) > 0 {
			// Its memory is among the memory manager's blocks already.
			need := w.CPU
			need.Memory = cpualloc.Memory{}
			needs[w.Name] = need
		}
		if k.mayPin(w) {
			needs[w.Name] = workload.CPUNeed{} // the kubelet's to pin first, once it admits the pod
			continue
		}
		if pinned := k.pinnedContainers(w); len(pinned) > 0 {
			if w.CPU.Exclusive && !w.Terminating {
				problems = append(problems, workload.Problem{Workload: w.Name, Reason: "KubeletPinned", Message: "the kubelet's static CPU manager pinned " +
					describe(pinned) + "; Locus leaves this pod's CPUs to the kubelet and writes no cgroup of those containers"})
			}
			needs[w.Name] = workload.CPUNeed{}
		}
	}
	return reserved, needs, problems
}

// mayPin says whether the kubelet may yet pin w: a Guaranteed pod it has
// not admitted (its cgroup is not made yet, workload.Workload.Awaited) on a
// node whose CPU or memory manager pins. The kubelet writes the cpusets of
// such a pod's containers as it creates them: no cpuset of Locus's may be
// waiting for them.
func (k Kubelet) mayPin(w workload.Workload) bool {
	return w.Awaited && (k.Policy == "static" || k.MemPinned != nil || k.Unknown != "") &&
		strings.EqualFold(string(w.QoS.Kube), string(memqos.Guaranteed))
}

// pinnedContainers is what the kubelet pinned of w: container name to CPUs.
func (k Kubelet) pinnedContainers(w workload.Workload) map[string]cpuset.CPUSet {
	if w.UID == "" {
		return nil
	}
	return k.Pinned[w.UID]
}

// describe lists pinned containers for a message, in name order.
func describe(pinned map[string]cpuset.CPUSet) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(pinned)) {
		parts = append(parts, fmt.Sprintf("container %s to CPUs %s", name, pinned[name]))
	}
	return strings.Join(parts, ", ")
}

// kubeletConflict explains why CPUs a workload holds or was given by the
// scheduler cannot be its own: the kubelet holds some of them.
func kubeletConflict(cpus, owned cpuset.CPUSet, unknown string) string {
	both := cpus.Intersection(owned)
	if both.IsEmpty() {
		return ""
	}
	if unknown != "" {
		return fmt.Sprintf("cpus %s may be the kubelet's: its CPU manager checkpoint could not be read (%s)", both, unknown)
	}
	return fmt.Sprintf("cpus %s are the kubelet's: its static CPU manager gave them to a container alone, and the kubelet wins", both)
}

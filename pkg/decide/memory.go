package decide

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// freeMemory is what each NUMA node can give pinned workloads before any
// of them is placed: its capacity (cpualloc.CapacityReserved: its memory
// less the kubelet's reserve for the system there, Kubelet.MemReserved, and
// its huge page pools whole) less what the kubelet's static memory manager
// gave containers. Nil when the topology says nothing of memory (a
// topology file without it): memory is then not accounted, as before.
func freeMemory(t *topology.Topology, kube Kubelet) map[int]cpualloc.Memory {
	reserve := map[int]cpualloc.Memory{}
	for id, b := range kube.MemReserved {
		reserve[id] = cpualloc.Memory{Bytes: b}
	}
	free := cpualloc.CapacityReserved(t, reserve)
	if len(free) == 0 {
		return nil
	}
	for _, b := range kube.MemBlocks {
		free = cpualloc.Subtract(free, cpualloc.Hold(b.Nodes, free, b.Memory))
	}
	return free
}

// memGroup is the nodes an assignment's memory is on: its MemNodes, or,
// in a checkpoint written before memory was accounted, its CPUs' nodes.
func memGroup(t *topology.Topology, a workload.Assignment) []int {
	if len(a.MemNodes) > 0 {
		return a.MemNodes
	}
	return t.NodesOf(a.CPUs)
}

// spillOf is what an assignment records of its memory's group: nothing
// when it is the CPUs' nodes (as in a checkpoint written before memory was
// accounted), the group when the memory spilled beyond them.
func spillOf(t *topology.Topology, cpus cpuset.CPUSet, group []int) []int {
	if slices.Equal(group, t.NodesOf(cpus)) {
		return nil
	}
	return group
}

// heldIs says whether held, recorded with an assignment, is m on nodes.
func heldIs(held map[int]cpualloc.Memory, nodes []int, m cpualloc.Memory) bool {
	if held == nil {
		return false
	}
	var sum cpualloc.Memory
	for id, h := range held {
		if !slices.Contains(nodes, id) {
			return false
		}
		sum = sum.Add(h)
	}
	return sum == m
}

// shortOf says what m lacks on group's nodes, for a refusal's message:
// each node's free memory of every kind asked for.
func shortOf(group []int, free map[int]cpualloc.Memory, m cpualloc.Memory) string {
	msg := fmt.Sprintf("%s does not fit on NUMA nodes %s, free:", describeMemory(m, m), cpuset.New(group...))
	for _, id := range group {
		msg += fmt.Sprintf(" node %d %s;", id, describeMemory(free[id], m))
	}
	return msg[:len(msg)-1]
}

// describeMemory names each kind of x that asked asks for, in MiB.
func describeMemory(x, asked cpualloc.Memory) string {
	var parts []string
	if asked.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("memory %dMi", x.Bytes>>20))
	}
	if asked.HugePages2Mi > 0 {
		parts = append(parts, fmt.Sprintf("hugepages-2Mi %dMi", x.HugePages2Mi>>20))
	}
	if asked.HugePages1Gi > 0 {
		parts = append(parts, fmt.Sprintf("hugepages-1Gi %dMi", x.HugePages1Gi>>20))
	}
	return strings.Join(parts, ", ")
}

// keptByGroup orders assignments by the size of their memory's group of
// nodes, then by name.
func keptByGroup(t *topology.Topology, as map[string]workload.Assignment) []string {
	names := slices.Sorted(maps.Keys(as))
	slices.SortStableFunc(names, func(a, b string) int { return len(memGroup(t, as[a])) - len(memGroup(t, as[b])) })
	return names
}

// decidedBase is the nodes a decision's memory goes on at least: its
// CPUs' nodes, and for the agent's own decision (a lease) the group it
// recorded.
func decidedBase(t *topology.Topology, need workload.CPUNeed) []int {
	return cpuset.New(t.NodesOf(need.Decided)...).Union(cpuset.New(need.DecidedMems...)).List()
}

// allocatedBase is the nodes an allocation names for its memory: the
// allocator's MemNodes, never fewer than its CPUs' nodes.
func allocatedBase(t *topology.Topology, res cpualloc.Result) []int {
	return cpuset.New(res.MemNodes...).Union(cpuset.New(t.NodesOf(res.CPUs)...)).List()
}

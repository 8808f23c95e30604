package decide

import (
	"fmt"
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

// memKinds are the fields of a cpualloc.Memory, each accounted alone.
var memKinds = []func(*cpualloc.Memory) *uint64{
	func(m *cpualloc.Memory) *uint64 { return &m.Bytes },
	func(m *cpualloc.Memory) *uint64 { return &m.HugePages2Mi },
	func(m *cpualloc.Memory) *uint64 { return &m.HugePages1Gi },
}

// fits says whether the nodes of group together have m free.
func fits(group []int, free map[int]cpualloc.Memory, m cpualloc.Memory) bool {
	if free == nil {
		return true
	}
	var sum cpualloc.Memory
	for _, id := range group {
		sum = sum.Add(free[id])
	}
	for _, kind := range memKinds {
		if *kind(&sum) < *kind(&m) {
			return false
		}
	}
	return true
}

// widen is the group of nodes whose memory a workload on base's nodes
// gets: base itself when it holds m, else base with the nodes nearest to
// it added one at a time (the smallest sum of distances to the group, then
// the lowest id) until it does, the kubelet memory manager's way of
// spilling. ok is false when even every node together cannot hold m.
func widen(t *topology.Topology, free map[int]cpualloc.Memory, base []int, m cpualloc.Memory) ([]int, bool) {
	group := slices.Sorted(slices.Values(base))
	for !fits(group, free, m) {
		best, bestDist := -1, 0
		for _, n := range t.Nodes {
			if slices.Contains(group, n.ID) || free[n.ID].IsZero() {
				continue
			}
			d := 0
			for _, g := range group {
				d += t.Distance(g, n.ID)
			}
			if best < 0 || d < bestDist {
				best, bestDist = n.ID, d
			}
		}
		if best < 0 {
			return group, false
		}
		group = append(group, best)
		slices.Sort(group)
	}
	return group, true
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

package cpualloc

import (
	"slices"

	"github.com/locus-project/locus/pkg/topology"
)

// MemGroup is the group of NUMA nodes (ids, ascending) whose memory a
// workload with CPUs on the nodes base gets, by the rule Allocate binds
// memory with: base itself when its nodes hold m (huge pages in whole
// pages of each node), else the smallest group around base that does, the
// least summed SLIT distance first, as kubelet's Memory Manager spills.
// ok is false, with base as the group, when no group holds m, or when base
// names a node that has no CPUs or that t lacks: the group a decision
// made elsewhere names is then not one the allocator would bind.
//
// It is how a caller that did not place the CPUs itself (the agent taking
// the scheduler's decision, or checking an allocation against what its
// node holds) binds memory exactly as the allocator would have.
func MemGroup(t *topology.Topology, free map[int]Memory, base []int, m Memory) ([]int, bool) {
	group := slices.Sorted(slices.Values(base))
	group = slices.Compact(group)
	if free == nil || m.IsZero() {
		return group, true
	}
	a, err := allocatorFor(t)
	if err != nil {
		return group, false
	}
	ix := a.ix
	fit, err := ix.newMemFit(free, m)
	if err != nil {
		return group, false
	}
	nodes := make([]int, 0, len(group))
	for _, id := range group {
		i := slices.IndexFunc(ix.nodes, func(n numa) bool { return n.id == id })
		if i < 0 {
			return group, false
		}
		nodes = append(nodes, i)
	}
	slices.Sort(nodes)
	around := ix.spillAround(fit, nodes)
	if !fit.holds(around) {
		return group, false
	}
	return ix.idsOf(around), true
}

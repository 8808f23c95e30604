package view

import (
	"math"
	"slices"

	"github.com/locus-project/locus/pkg/topology"
)

// The pools that pin a workload's CPUs, and with them its cpuset.mems.
var pinnedPools = []string{"exclusive", "static-burst"}

// nodeHugePages are a node's huge page pools now, or the topology's
// figures; only the pools with pages reserved, smallest pages first.
func (s *Snapshot) nodeHugePages(n topology.NUMANode) []topology.HugePages {
	pools := n.HugePages
	if m, ok := s.NodeMemory[n.ID]; ok && m.HugePages != nil {
		pools = m.HugePages
	}
	var out []topology.HugePages
	for _, h := range pools {
		if h.Total > 0 {
			out = append(out, h)
		}
	}
	return out
}

// NodeHeld is the memory pinned workloads hold on a node: what the agent
// accounts them as holding there (MemoryHeldByNode) when it says so, else
// what the pinned workloads whose cpuset.mems name the node use there now.
// It is false when neither is known: no agent, or nothing measured yet.
func (s *Snapshot) NodeHeld(node int) (uint64, bool) {
	accounted := slices.ContainsFunc(s.Workloads, func(w Workload) bool { return w.MemoryHeldByNode != nil })
	measured := slices.ContainsFunc(s.Workloads, func(w Workload) bool { return w.pinned() && w.MemoryByNode != nil })
	var sum uint64
	for _, w := range s.Workloads {
		switch {
		case accounted:
			sum = addSaturating(sum, w.MemoryHeldByNode[node])
		case w.pinned() && slices.Contains(w.memNodes(), node):
			sum = addSaturating(sum, w.MemoryByNode[node])
		}
	}
	return sum, accounted || measured
}

// pinned says the workload's CPUs, and with them its cpuset.mems, are its
// own (or static-burst's few).
func (w Workload) pinned() bool { return slices.Contains(pinnedPools, w.Pool) }

// memNodes are the nodes of the workload's cpuset.mems; its CPUs' nodes
// from an agent that does not say.
func (w Workload) memNodes() []int {
	if w.MemNodes != nil {
		return w.MemNodes
	}
	return w.NUMANodes
}

// addSaturating adds byte counts from a snapshot, which may come from
// another process: a sum that would wrap shows as the largest count.
func addSaturating(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

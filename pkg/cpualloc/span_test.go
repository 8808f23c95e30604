package cpualloc

import (
	"slices"

	"github.com/locus-project/locus/pkg/topology"
)

// Sockets rank before nodes (docs/allocator.md): these oracles find the
// fewest sockets, then nodes, a request can span.

// socketsOf counts the sockets of the nodes.
func socketsOf(topo *topology.Topology, nodes []int) int {
	seen := map[int]bool{}
	for _, c := range topo.CPUs {
		if slices.Contains(nodes, c.NUMA) {
			seen[c.Socket] = true
		}
	}
	return len(seen)
}

// minSockets is the fewest sockets any k nodes with capacity for n touch.
func (o oracle) minSockets(topo *topology.Topology, k, n int) int {
	var ids []int
	for id := range o.capacity {
		ids = append(ids, id)
	}
	best := -1
	for mask := 0; mask < 1<<len(ids); mask++ {
		var set []int
		room := 0
		for i, id := range ids {
			if mask&(1<<i) != 0 {
				set = append(set, id)
				room += o.capacity[id]
			}
		}
		if len(set) == k && room >= n {
			if s := socketsOf(topo, set); best < 0 || s < best {
				best = s
			}
		}
	}
	return best
}

// bestSpan is the fewest sockets, then nodes, of a node set with capacity
// for n; (0, 0) when none has.
func (o oracle) bestSpan(topo *topology.Topology, n int) (sockets, nodes int) {
	var ids []int
	for id := range o.capacity {
		ids = append(ids, id)
	}
	for mask := 1; mask < 1<<len(ids); mask++ {
		var set []int
		room := 0
		for i, id := range ids {
			if mask&(1<<i) != 0 {
				set = append(set, id)
				room += o.capacity[id]
			}
		}
		if room < n {
			continue
		}
		if s := socketsOf(topo, set); nodes == 0 || s < sockets || s == sockets && len(set) < nodes {
			sockets, nodes = s, len(set)
		}
	}
	return sockets, nodes
}

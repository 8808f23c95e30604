package cpualloc

import (
	"errors"
	"slices"

	"k8s.io/utils/cpuset"
)

// allocateNear places a request whose devices sit on req.Near. It tries the
// rings of CPU nodes around the devices, nearest first: the devices' own
// nodes, then every node within the next SLIT distance, and so on, the last
// ring being the whole machine. Within a ring the policy's usual ranking
// chooses (one node, one L3, whole cores, packing), so a request that fits
// on the devices' nodes lands there, and one that does not lands on the
// nearest nodes that hold it. The last ring restricts nothing, so a request
// is refused exactly when the same request without Near is.
func (a *Allocator) allocateNear(st occupancy, free map[int]Memory, reserved cpuset.CPUSet, req Request) (Result, error) {
	ix := a.ix
	near, err := ix.nearNodes(req.Near)
	if err != nil {
		return Result{}, err
	}
	var last error
	for _, ring := range ix.rings(near) {
		inside := st
		if len(ring) < len(ix.nodes) {
			inside.outside = ix.cpusOutside(ring)
		}
		res, err := a.placeMemory(inside, free, reserved, req)
		if err == nil {
			res.Unaligned = !isSubset(res.MemNodes, near.ids)
			return res, nil
		}
		if errors.Is(err, ErrInvalidRequest) {
			return Result{}, err
		}
		last = err
	}
	return Result{}, last
}

// nearSet is a request's device nodes: their ids, sorted and without
// duplicates, and each one's position in index.topoNodes.
type nearSet struct {
	ids []int
	pos []int
}

// nearNodes checks that every id of near is a node of the topology (a
// device's node is one of the machine's, never NUMAUnknown: a caller drops
// those) and returns them sorted, each once.
func (ix *index) nearNodes(near []int) (nearSet, error) {
	seen := make([]bool, len(ix.topoNodes))
	for _, id := range near {
		p, ok := slices.BinarySearch(ix.topoNodes, id)
		if !ok {
			return nearSet{}, invalidf("near: node %d is not a NUMA node of the topology (nodes %v)", id, ix.topoNodes)
		}
		seen[p] = true
	}
	var s nearSet
	for p, on := range seen {
		if on {
			s.ids = append(s.ids, ix.topoNodes[p])
			s.pos = append(s.pos, p)
		}
	}
	return s, nil
}

// rings is the groups of CPU nodes (indices) a near request is tried on,
// each a superset of the one before: the nodes within each distance from
// the nearest device node, in increasing distance, the devices' own nodes
// first. A device on a node without CPUs (a memory-only node) starts at
// the CPU nodes nearest it. The last ring is every CPU node.
func (ix *index) rings(near nearSet) [][]int {
	dist := make([]int, len(ix.nodes))
	for ni, n := range ix.nodes {
		dist[ni] = -1
		for i, p := range near.pos {
			d := ix.nodeDistance[p][ni]
			if near.ids[i] == n.id {
				d = 0 // the device's own node, whatever its SLIT row says
			} else if d < 0 {
				d = unknownDistance
			}
			if dist[ni] < 0 || d < dist[ni] {
				dist[ni] = d
			}
		}
	}
	steps := slices.Compact(slices.Sorted(slices.Values(dist)))
	out := make([][]int, 0, len(steps))
	for _, limit := range steps {
		var ring []int
		for ni, d := range dist {
			if d <= limit {
				ring = append(ring, ni)
			}
		}
		out = append(out, ring)
	}
	return out
}

// unknownDistance ranks a node whose SLIT distance is not reported behind
// every reported one (SLIT distances fit in a byte).
const unknownDistance = 1 << 16

// nodeDistances is the SLIT distance from every node of the topology (by
// position in topoNodes, CPU-less ones too: a device may hang off one) to
// every CPU node (by index).
func (ix *index) nodeDistances(distance func(a, b int) int) [][]int {
	out := make([][]int, len(ix.topoNodes))
	for p, id := range ix.topoNodes {
		out[p] = make([]int, len(ix.nodes))
		for ni, n := range ix.nodes {
			out[p][ni] = distance(id, n.id)
		}
	}
	return out
}

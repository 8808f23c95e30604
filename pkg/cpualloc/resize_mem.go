package cpualloc

import (
	"errors"
	"slices"

	"k8s.io/utils/cpuset"
)

// outsideMemNodes is the CPUs a resized workload's grow may not take: those
// of the nodes outside its memory group, nil when it names none. Its memory
// stays where it is held, so the group must already hold every CPU the
// workload keeps; Free plays no part.
func (ix *index) outsideMemNodes(held cpuset.CPUSet, memNodes []int) ([]uint64, error) {
	if len(memNodes) == 0 {
		return nil, nil
	}
	if len(memNodes) > len(ix.topoNodes) {
		return nil, invalidf("resize: memNodes names %d nodes, the topology has %d", len(memNodes), len(ix.topoNodes))
	}
	var group []int
	for _, id := range memNodes {
		if _, ok := slices.BinarySearch(ix.topoNodes, id); !ok {
			return nil, invalidf("resize: memNodes: node %d is not a NUMA node of the topology (nodes %v)", id, ix.topoNodes)
		}
		for ni, n := range ix.nodes {
			if n.id == id && !slices.Contains(group, ni) {
				group = append(group, ni)
			}
		}
	}
	for _, ni := range ix.nodeIndices(held.List()) {
		if !slices.Contains(group, ni) {
			return nil, invalidf("resize: held CPUs on node %d, outside memNodes %v", ix.nodes[ni].id, memNodes)
		}
	}
	return ix.cpusOutside(group), nil
}

// withMemNodes is res with the workload's memory group, when it has one.
func withMemNodes(res Result, memNodes []int) Result {
	if len(memNodes) > 0 {
		res.MemNodes = slices.Compact(slices.Sorted(slices.Values(memNodes)))
	}
	return res
}

// insideGroup says of a grow that found too few free CPUs that it looked
// inside the memory group only, so "0 free" is not read as the machine's.
func insideGroup(err error, memNodes []int) error {
	if len(memNodes) == 0 || !errors.Is(err, ErrInsufficient) {
		return err
	}
	return shortf("%s on memNodes %v", err, memNodes)
}

package cpualloc

import (
	"errors"
	"slices"

	"k8s.io/utils/cpuset"
)

// resizeGroup is the node indices of a resized workload's memory group,
// nil when it names none. Its memory stays where it is held, so the group
// must already hold every CPU the workload keeps; Free plays no part.
func (ix *index) resizeGroup(held cpuset.CPUSet, memNodes []int) ([]int, error) {
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
	return group, nil
}

// insideGroup says of a grow that found too few free CPUs that it looked
// inside the memory group only, so "0 free" is not read as the machine's.
func insideGroup(err error, memNodes []int) error {
	if len(memNodes) == 0 || !errors.Is(err, ErrInsufficient) {
		return err
	}
	return shortf("%s on memNodes %v", err, memNodes)
}

package nrt

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// The names of a zone's huge page resources, as a pod asks for them.
const (
	ResourceHugePages2Mi = "hugepages-2Mi"
	ResourceHugePages1Gi = "hugepages-1Gi"
)

// available is capacity less what each pinned pod holds, spread over its
// memory nodes as cpualloc.Hold spreads it (the allocator's and the
// agent's own count), pods taken in name order. A pod's memory nodes are
// memNodes[name], or its CPUs' nodes when absent. Nothing goes below zero:
// a node over-committed by pods placed before memory was counted shows
// none available.
func available(t *topology.Topology, capacity map[int]cpualloc.Memory, assignments map[string]workload.Assignment,
	need map[string]cpualloc.Memory, memNodes map[string][]int) map[int]cpualloc.Memory {
	free := maps.Clone(capacity)
	for _, name := range slices.Sorted(maps.Keys(assignments)) {
		m := need[name]
		if m == (cpualloc.Memory{}) {
			continue
		}
		group := memNodes[name]
		if len(group) == 0 {
			group = t.NodesOf(assignments[name].CPUs)
		}
		for n, h := range cpualloc.Hold(group, free, m) {
			if f, ok := free[n]; ok {
				free[n] = f.Sub(h)
			}
		}
	}
	return free
}

// memoryResources are a zone's memory and huge page resources: memory
// always, a huge page size only where the node has a pool of it, so that a
// machine without huge pages publishes what it did before.
func memoryResources(n topology.NUMANode, capacity, avail cpualloc.Memory) []Resource {
	out := []Resource{{Name: "memory", Capacity: bytesOf(capacity.Bytes), Allocatable: bytesOf(capacity.Bytes), Available: bytesOf(avail.Bytes)}}
	for _, p := range []struct {
		name       string
		sizeKiB    uint64
		cap, avail uint64
	}{
		{ResourceHugePages2Mi, topology.HugePages2MiKiB, capacity.HugePages2Mi, avail.HugePages2Mi},
		{ResourceHugePages1Gi, topology.HugePages1GiKiB, capacity.HugePages1Gi, avail.HugePages1Gi},
	} {
		if !slices.ContainsFunc(n.HugePages, func(h topology.HugePages) bool { return h.SizeKiB == p.sizeKiB }) {
			continue
		}
		out = append(out, Resource{Name: p.name, Capacity: bytesOf(p.cap), Allocatable: bytesOf(p.cap), Available: bytesOf(p.avail)})
	}
	return out
}

// bytesOf is a byte count as a quantity. Counts come from the topology,
// which bounds memory and huge pages far below 2^63.
func bytesOf(n uint64) resource.Quantity { return byteQty(int64(min(n, 1<<62))) }

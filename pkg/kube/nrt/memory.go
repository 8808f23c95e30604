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

// available is capacity less what each pinned pod holds: what the agent
// counted when it placed the pod (its assignment's MemHeld, or its Memory
// spread over its memory nodes as cpualloc.Hold spreads it), or for an
// assignment from before memory was counted, the pod's request (need) over
// its CPUs' nodes; pods taken in name order. Nothing goes below zero: a
// node over-committed by pods placed before memory was counted shows none
// available.
func available(t *topology.Topology, capacity map[int]cpualloc.Memory, assignments map[string]workload.Assignment,
	need map[string]cpualloc.Memory) map[int]cpualloc.Memory {
	free := maps.Clone(capacity)
	for _, name := range slices.Sorted(maps.Keys(assignments)) {
		a := assignments[name]
		held := a.MemHeld
		if len(held) == 0 {
			m, group := a.Memory, a.MemNodes
			if m.IsZero() {
				m = need[name]
			}
			if m.IsZero() {
				continue
			}
			if len(group) == 0 {
				group = t.NodesOf(a.CPUs)
			}
			held = cpualloc.Hold(group, free, m)
		}
		for n, h := range held {
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

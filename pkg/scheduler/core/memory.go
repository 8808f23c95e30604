package core

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/topology"
)

// maxZoneBytes bounds a zone's memory and huge pages, capacity and
// available: a petabyte is more than any NUMA node has, and keeps the sum
// over every zone a report may list (topology.MaxNodeID+1) within uint64.
const maxZoneBytes = 1 << 50

// maxZoneResources bounds the resources a zone lists: the agent writes
// four (cpu, memory and two huge page sizes); others may add a few.
const maxZoneResources = 64

// zoneMemory is what a zone has of memory and huge pages: capacity (part
// of the machine) and available (what pinned pods leave).
type zoneMemory struct {
	capacity, available cpualloc.Memory
	has                 bool // the zone lists memory
}

// readZoneMemory reads a zone's memory and huge pages, each within 0 and
// maxZoneBytes and available within capacity; the error names the zone,
// the resource and the field.
func readZoneMemory(z nrt.Zone) (zoneMemory, error) {
	var out zoneMemory
	for _, r := range z.Resources {
		var capacity, available *uint64
		switch r.Name {
		case "memory":
			capacity, available, out.has = &out.capacity.Bytes, &out.available.Bytes, true
		case nrt.ResourceHugePages2Mi:
			capacity, available = &out.capacity.HugePages2Mi, &out.available.HugePages2Mi
		case nrt.ResourceHugePages1Gi:
			capacity, available = &out.capacity.HugePages1Gi, &out.available.HugePages1Gi
		default:
			continue
		}
		var err error
		if *capacity, err = zoneBytes(z.Name, r.Name, "capacity", r.Capacity); err != nil {
			return out, err
		}
		if *available, err = zoneBytes(z.Name, r.Name, "available", r.Available); err != nil {
			return out, err
		}
		if *available > *capacity {
			return out, fmt.Errorf("zone %s: %s available %s is more than its capacity %s", topology.Quote(z.Name), r.Name, r.Available.String(), r.Capacity.String())
		}
	}
	return out, nil
}

func zoneBytes(zone, name, field string, q resource.Quantity) (uint64, error) {
	if !quantity.Bounded(&q) || q.Sign() < 0 || q.Cmp(*resource.NewQuantity(maxZoneBytes, resource.BinarySI)) > 0 {
		return 0, fmt.Errorf("zone %s: %s %s %s is outside 0..%d bytes", topology.Quote(zone), name, field, q.String(), uint64(maxZoneBytes))
	}
	return uint64(q.Value()), nil
}

// hugePagesOf is a zone's huge page capacity as the machine model holds
// it: pools of whole pages (free is only shown, and the scheduler reads
// what is available from the report instead).
func hugePagesOf(capacity cpualloc.Memory) []topology.HugePages {
	var out []topology.HugePages
	for _, p := range []struct{ kib, bytes uint64 }{{topology.HugePages2MiKiB, capacity.HugePages2Mi}, {topology.HugePages1GiKiB, capacity.HugePages1Gi}} {
		if p.bytes > 0 {
			out = append(out, topology.HugePages{SizeKiB: p.kib, Total: p.bytes / (p.kib * 1024)})
		}
	}
	return out
}

// freeLess is a report's free memory less the in-cycle holdings; the
// report's own map when there are none.
func freeLess(free map[int]cpualloc.Memory, held heldMem) map[int]cpualloc.Memory {
	if free == nil || len(held) == 0 {
		return free
	}
	out := maps.Clone(free)
	for _, h := range held {
		if f, ok := out[h.node]; ok {
			out[h.node] = f.Sub(h.mem)
		}
	}
	return out
}

// shortOf is the first kind the node's free memory, over all its NUMA
// nodes together, cannot give m: "" when every kind could fit somewhere.
// It is the cheap refusal, before the allocator, of a node that is full.
func shortOf(free map[int]cpualloc.Memory, m cpualloc.Memory) (string, uint64, uint64) {
	var total cpualloc.Memory
	for _, f := range free {
		total = total.Add(f)
	}
	switch {
	case m.Bytes > total.Bytes:
		return "memory", m.Bytes, total.Bytes
	case m.HugePages2Mi > total.HugePages2Mi:
		return nrt.ResourceHugePages2Mi, m.HugePages2Mi, total.HugePages2Mi
	case m.HugePages1Gi > total.HugePages1Gi:
		return nrt.ResourceHugePages1Gi, m.HugePages1Gi, total.HugePages1Gi
	}
	return "", 0, 0
}

// readFree reads every zone's memory and huge pages available, by NUMA
// node id: nil when no zone lists memory (a report from an agent that
// does not count it). whole says every zone has all of its capacity
// available.
func readFree(zones []nrt.Zone) (free map[int]cpualloc.Memory, whole bool, err error) {
	whole = true
	for _, z := range zones {
		id, ok := zoneID(z)
		if !ok {
			continue
		}
		mem, err := readZoneMemory(z)
		if err != nil {
			return nil, false, err
		}
		if !mem.has {
			continue
		}
		if free == nil {
			free = map[int]cpualloc.Memory{}
		}
		free[id] = mem.available
		whole = whole && mem.available == mem.capacity
	}
	return free, whole && free != nil, nil
}

// heldMem is what a pod's memory holds, by NUMA node in node order: a
// slice of its one or two nodes rather than a map, as every pinned pod
// keeps one (a map of one entry is about 300 bytes, this 40).
type heldMem []nodeMemory

type nodeMemory struct {
	node int
	mem  cpualloc.Memory
}

// heldOf is m in node order, nil for none.
func heldOf(m map[int]cpualloc.Memory) heldMem {
	if len(m) == 0 {
		return nil
	}
	out := make(heldMem, 0, len(m))
	for n, mem := range m {
		out = append(out, nodeMemory{n, mem})
	}
	slices.SortFunc(out, func(a, b nodeMemory) int { return a.node - b.node })
	return out
}

// holdOn is what a pod's memory m holds on each node of its memory group
// on the node v shows, as the allocator and the agent count it
// (cpualloc.Hold): nil when m is none or the node counts no memory.
func holdOn(v *NodeView, group []int, m cpualloc.Memory) heldMem {
	if m == (cpualloc.Memory{}) || v == nil || v.free == nil || len(group) == 0 {
		return nil
	}
	return heldOf(cpualloc.Hold(group, v.free, m))
}

// addMem counts (sign 1) or stops counting (sign -1) memory held by node.
func (t *tally) addMem(held heldMem, sign int) {
	for _, h := range held {
		i, found := slices.BinarySearchFunc(t.mem, h.node, func(e nodeMemory, n int) int { return e.node - n })
		switch {
		case sign > 0 && found:
			t.mem[i].mem = t.mem[i].mem.Add(h.mem)
		case sign > 0:
			t.mem = slices.Insert(t.mem, i, h)
		case !found:
		case !t.mem[i].mem.Sub(h.mem).IsZero():
			t.mem[i].mem = t.mem[i].mem.Sub(h.mem)
		default:
			t.mem = slices.Delete(t.mem, i, i+1)
		}
	}
}

// moreMemory says whether after has more of some kind of memory free on
// some NUMA node than before.
func moreMemory(before, after map[int]cpualloc.Memory) bool {
	for n, a := range after {
		b := before[n]
		if a.Bytes > b.Bytes || a.HugePages2Mi > b.HugePages2Mi || a.HugePages1Gi > b.HugePages1Gi {
			return true
		}
	}
	return false
}

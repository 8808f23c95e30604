package cpualloc

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// Page sizes in bytes of the huge page kinds a request can name.
const (
	pageBytes2Mi = topology.HugePages2MiKiB * 1024
	pageBytes1Gi = topology.HugePages1GiKiB * 1024
)

// memKinds are the kinds of Memory, in the order of Memory.at and the
// order errors name them: the name and the unit a node's room is counted
// in (1 byte, or the page size: a page is never split between nodes).
var memKinds = [...]struct {
	name string
	page uint64
}{
	{"memory", 1},
	{"hugepages-2Mi", pageBytes2Mi},
	{"hugepages-1Gi", pageBytes1Gi},
}

// at is the amount of kind k (an index of memKinds).
func (m *Memory) at(k int) *uint64 {
	switch k {
	case 1:
		return &m.HugePages2Mi
	case 2:
		return &m.HugePages1Gi
	}
	return &m.Bytes
}

// IsZero says whether m asks for (or holds) nothing of any kind.
func (m Memory) IsZero() bool { return m == Memory{} }

// Add is m plus o, each kind saturating at the largest uint64 rather than
// wrapping, so sums of hostile amounts never look small.
func (m Memory) Add(o Memory) Memory {
	for k := range memKinds {
		a, b := m.at(k), *o.at(k)
		if *a > math.MaxUint64-b {
			*a = math.MaxUint64
		} else {
			*a += b
		}
	}
	return m
}

// Sub is m minus o, each kind stopping at zero.
func (m Memory) Sub(o Memory) Memory {
	for k := range memKinds {
		a, b := m.at(k), *o.at(k)
		*a -= min(*a, b)
	}
	return m
}

// roomOf is what a node with free f can give of kind k: all its bytes, or
// its whole pages of the kind (a page is never split between nodes).
func roomOf(f Memory, k int) uint64 {
	v := *f.at(k)
	return v - v%memKinds[k].page
}

// Hold is how much of m each node of group holds when m is placed on the
// group, filling the nodes in id order as kubelet's Memory Manager does:
// each kind takes what it can from the lowest id first, huge pages in whole
// pages. Every node of group has an entry, zero when it holds nothing. What
// the group has no room for is held by its last node, so accounting a
// workload whose group no longer holds it still counts all it holds.
func Hold(group []int, free map[int]Memory, m Memory) map[int]Memory {
	ids := slices.Sorted(slices.Values(group))
	ids = slices.Compact(ids)
	out := make(map[int]Memory, len(ids))
	if len(ids) == 0 {
		return out
	}
	for k := range memKinds {
		left := *m.at(k)
		for _, id := range ids {
			h := out[id]
			take := min(left, roomOf(free[id], k))
			*h.at(k) += take
			out[id] = h
			left -= take
		}
		if left > 0 {
			last := out[ids[len(ids)-1]]
			*last.at(k) += left
			out[ids[len(ids)-1]] = last
		}
	}
	return out
}

// Subtract is free less held, node by node, each kind stopping at zero; a
// node held but absent from free stays absent. free is not changed.
func Subtract(free, held map[int]Memory) map[int]Memory {
	out := make(map[int]Memory, len(free))
	for id, f := range free {
		out[id] = f.Sub(held[id])
	}
	return out
}

// GiveBack is free with held given back, node by node (a workload that
// held it moved or left); a node held but absent from free stays absent.
// free is not changed.
func GiveBack(free, held map[int]Memory) map[int]Memory {
	out := make(map[int]Memory, len(free))
	for id, f := range free {
		out[id] = f.Add(held[id])
	}
	return out
}

// Capacity is what each NUMA node with memory can give pinned workloads:
// its MemoryTotal and its huge page pools (Total pages of each size: they
// are reserved for the node; Free only shows what has not been faulted in),
// less reserve split evenly over the nodes with memory (the system's and
// the kubelet's reserve when only a total is known). Nodes without memory
// or huge pages have no entry.
func Capacity(t *topology.Topology, reserve Memory) map[int]Memory {
	var withMem []topology.NUMANode
	for _, n := range t.Nodes {
		if n.MemoryTotal > 0 || len(n.HugePages) > 0 {
			withMem = append(withMem, n)
		}
	}
	out := make(map[int]Memory, len(withMem))
	if len(withMem) == 0 {
		return out
	}
	share := Memory{}
	for k := range memKinds {
		*share.at(k) = *reserve.at(k) / uint64(len(withMem))
	}
	for _, n := range withMem {
		out[n.ID] = nodeCapacity(n).Sub(share)
	}
	return out
}

// CapacityReserved is Capacity with the reserve given per node, as
// kubelet's reservedMemory configuration gives it.
func CapacityReserved(t *topology.Topology, reserve map[int]Memory) map[int]Memory {
	out := map[int]Memory{}
	for _, n := range t.Nodes {
		if n.MemoryTotal > 0 || len(n.HugePages) > 0 {
			out[n.ID] = nodeCapacity(n).Sub(reserve[n.ID])
		}
	}
	return out
}

func nodeCapacity(n topology.NUMANode) Memory {
	c := Memory{Bytes: n.MemoryTotal}
	h2, h1 := n.HugePagesOf(topology.HugePages2MiKiB), n.HugePagesOf(topology.HugePages1GiKiB)
	// Validated topologies bound pages so that their bytes fit in uint64.
	c.HugePages2Mi, c.HugePages1Gi = h2.Bytes(h2.Total), h1.Bytes(h1.Total)
	return c
}

// validMemory checks the request's huge pages are whole pages.
func (r Request) validMemory() error {
	if r.Memory.HugePages2Mi%pageBytes2Mi != 0 {
		return invalidf("memory.hugePages2Mi: %d bytes is not a multiple of the 2Mi page (%d bytes)",
			r.Memory.HugePages2Mi, uint64(pageBytes2Mi))
	}
	if r.Memory.HugePages1Gi%pageBytes1Gi != 0 {
		return invalidf("memory.hugePages1Gi: %d bytes is not a multiple of the 1Gi page (%d bytes)",
			r.Memory.HugePages1Gi, uint64(pageBytes1Gi))
	}
	return nil
}

// formatBytes prints n in the largest binary unit that keeps it >= 1, with
// one decimal: 48.0GiB, 512.0MiB, 100B.
func formatBytes(n uint64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 {
		return fmt.Sprintf("%dB", n)
	}
	f, u := float64(n)/1024, 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return fmt.Sprintf("%.1f%s", f, units[u])
}

// memoryShort explains, for the first kind no group of nodes holds, what
// was asked and what each node has free of it.
func memoryShort(m *memFit) error {
	for k, kind := range memKinds {
		asked := *m.asked.at(k)
		if asked == 0 {
			continue
		}
		total := uint64(0)
		parts := make([]string, len(m.ids))
		for i, id := range m.ids {
			room := roomOf(m.free[i], k)
			total = Memory{Bytes: total}.Add(Memory{Bytes: room}).Bytes
			parts[i] = fmt.Sprintf("%d: %s", id, formatBytes(room))
		}
		if total < asked {
			return shortf("%s: %s asked; free per node: %s", kind.name, formatBytes(asked), strings.Join(parts, ", "))
		}
	}
	return nil
}

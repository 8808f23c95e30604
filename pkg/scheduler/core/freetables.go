package core

import (
	"encoding/binary"
	"slices"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// maxFreeTables bounds the free-memory tables kept for sharing: past it
// the table starts anew (the views and reports keep what they hold).
const maxFreeTables = 1024

// freeTables are the free-memory tables (by NUMA node id) the reports and
// views hold, each distinct table once. Every node's report and every
// packed node's view kept a map of its own, about 340 bytes for two NUMA
// nodes, 0.7 MB at 1000 nodes; nodes of one machine that report the same
// available memory, or hold the same in-cycle memory, have the same table.
// The tables are never changed once made (see NodeView.free), so sharing
// them is safe. Guarded by Cluster.mu.
type freeTables struct {
	of map[string]map[int]cpualloc.Memory
}

// intern is the kept table equal to m, m itself kept when there is none;
// nil and empty tables are returned as they are.
func (f *freeTables) intern(m map[int]cpualloc.Memory) map[int]cpualloc.Memory {
	if len(m) == 0 {
		return m
	}
	key := freeKey(m)
	if t, ok := f.of[key]; ok {
		return t
	}
	if f.of == nil || len(f.of) >= maxFreeTables {
		f.of = map[string]map[int]cpualloc.Memory{}
	}
	f.of[key] = m
	return m
}

// freeKey is m as bytes, in node order: equal for equal tables.
func freeKey(m map[int]cpualloc.Memory) string {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b := make([]byte, 0, 32*len(ids))
	for _, id := range ids {
		f := m[id]
		b = binary.LittleEndian.AppendUint64(b, uint64(id))
		b = binary.LittleEndian.AppendUint64(b, f.Bytes)
		b = binary.LittleEndian.AppendUint64(b, f.HugePages2Mi)
		b = binary.LittleEndian.AppendUint64(b, f.HugePages1Gi)
	}
	return string(b)
}

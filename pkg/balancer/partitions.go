package balancer

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Kind says what a partition is.
type Kind string

const (
	// ByNUMA makes one partition per NUMA node: memory locality first.
	ByNUMA Kind = "numa"
	// ByL3 makes one partition per L3 cache: cache affinity too, on
	// machines with several L3 caches per node.
	ByL3 Kind = "l3"
)

// ParseKind reads "numa" or "l3".
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case ByNUMA, ByL3:
		return k, nil
	}
	return "", fmt.Errorf("%q is not numa or l3", s)
}

// Partitions splits the pool's CPUs by NUMA node or by L3 cache, in order of
// node (or cache) id. CPUs outside the pool (reserved, isolated, held
// exclusively) belong to no partition; a node or cache left without CPUs
// is no partition. A machine that reports no L3 is split by node.
func Partitions(t *topology.Topology, kind Kind, pool cpuset.CPUSet) []Partition {
	type key struct{ node, l3 int }
	cpus := map[key][]int{}
	for _, c := range t.CPUs {
		if !pool.Contains(c.ID) {
			continue
		}
		k := key{node: c.NUMA, l3: -1}
		if kind == ByL3 && c.L3 >= 0 {
			k.l3 = c.L3
		}
		cpus[k] = append(cpus[k], c.ID)
	}
	keys := make([]key, 0, len(cpus))
	for k := range cpus {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].l3 != keys[j].l3 && kind == ByL3 {
			return keys[i].l3 < keys[j].l3
		}
		return keys[i].node < keys[j].node
	})
	out := make([]Partition, 0, len(keys))
	for _, k := range keys {
		name := fmt.Sprintf("node%d", k.node)
		if k.l3 >= 0 {
			name = fmt.Sprintf("l3-%d", k.l3)
		}
		out = append(out, Partition{Name: name, CPUs: cpuset.New(cpus[k]...), Nodes: []int{k.node}})
	}
	return out
}

// NodeDistance gives the topology's SLIT distances, for Input.Distance.
func NodeDistance(t *topology.Topology) func(a, b int) int {
	return t.Distance
}

package main

import (
	"fmt"
	"strconv"
	"strings"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// planMemoryFlags are what `locus plan` asks of memory: the request, and
// what pinned workloads already hold on each node, each as the flag's text.
type planMemoryFlags struct {
	memory, hugePages2Mi, hugePages1Gi string
	heldMemory, held2Mi, held1Gi       string
}

// memoryKind is one kind of memory a request can ask for: its request and
// held flags, its page size (0 for ordinary memory) and where it sits in a
// cpualloc.Memory.
type memoryKind struct {
	flag, heldFlag string
	pageKiB        uint64
	field          func(*cpualloc.Memory) *uint64
}

var memoryKinds = []memoryKind{
	{"--memory", "--memory-held", 0, func(m *cpualloc.Memory) *uint64 { return &m.Bytes }},
	{"--hugepages-2Mi", "--hugepages-2Mi-held", topology.HugePages2MiKiB, func(m *cpualloc.Memory) *uint64 { return &m.HugePages2Mi }},
	{"--hugepages-1Gi", "--hugepages-1Gi-held", topology.HugePages1GiKiB, func(m *cpualloc.Memory) *uint64 { return &m.HugePages1Gi }},
}

// values lists the flags' text in the order of memoryKinds.
func (f planMemoryFlags) values() (requests, held [3]string) {
	return [3]string{f.memory, f.hugePages2Mi, f.hugePages1Gi}, [3]string{f.heldMemory, f.held2Mi, f.held1Gi}
}

// request reads the memory the workload needs. Huge pages come in whole
// pages, as the kubelet requires of a pod's hugepages-<size> request.
func (f planMemoryFlags) request() (cpualloc.Memory, error) {
	var m cpualloc.Memory
	requests, _ := f.values()
	for i, k := range memoryKinds {
		b, err := quantityBytes(k.flag, requests[i])
		if err != nil {
			return m, err
		}
		if page := k.pageKiB * 1024; page > 0 && b%page != 0 {
			return m, usagef("%s %s is not a whole number of %s pages", k.flag, requests[i], topology.HumanBytes(page))
		}
		*k.field(&m) = b
	}
	return m, nil
}

// quantityBytes reads a quantity flag ("" or "0" for none) as bytes, with
// the bounds of every quantity flag.
func quantityBytes(flag, s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	if len(s) > maxQuantityText {
		return 0, usagef("%s %q is not a quantity (like 64Mi, 8Gi)", flag, clip(s))
	}
	q, err := nonNegativeQuantity(flag, s)
	if err != nil {
		return 0, err
	}
	return uint64(q.Value()), nil
}

// free is what each node can still give pinned workloads: its capacity
// (MemTotal, and each pool's reserved pages) less what the held flags say
// pinned workloads hold there. Holding more than a node has is a typo.
func (f planMemoryFlags) free(t *topology.Topology) (map[int]cpualloc.Memory, error) {
	free := map[int]cpualloc.Memory{}
	for _, n := range t.Nodes {
		free[n.ID] = cpualloc.Memory{Bytes: n.MemoryTotal,
			HugePages2Mi: hugePoolBytes(n, topology.HugePages2MiKiB),
			HugePages1Gi: hugePoolBytes(n, topology.HugePages1GiKiB)}
	}
	_, held := f.values()
	for i, k := range memoryKinds {
		byNode, err := parseNodeQuantities(k.heldFlag, held[i], t)
		if err != nil {
			return nil, err
		}
		for node, b := range byNode {
			m := free[node]
			room := k.field(&m)
			if b > *room {
				return nil, usagef("%s: node %d holds %s, more than its %s", k.heldFlag, node,
					topology.HumanBytes(b), topology.HumanBytes(*room))
			}
			*room -= b
			free[node] = m
		}
	}
	return free, nil
}

// hugePoolBytes is a node's pool of one page size in bytes. The topology
// bounds a pool's page count, so the product cannot wrap.
func hugePoolBytes(n topology.NUMANode, sizeKiB uint64) uint64 {
	h := n.HugePagesOf(sizeKiB)
	return h.Bytes(h.Total)
}

// parseNodeQuantities reads "NODE=QUANTITY,..." pairs, each node a node of
// t named at most once. The pairs are counted before they are split: there
// cannot be more than the machine has nodes.
func parseNodeQuantities(flag, s string, t *topology.Topology) (map[int]uint64, error) {
	out := map[int]uint64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	if pairs := strings.Count(s, ",") + 1; pairs > len(t.Nodes) {
		return nil, usagef("%s: %d pairs, but the machine has %d NUMA nodes", flag, pairs, len(t.Nodes))
	}
	nodes := map[int]bool{}
	for _, n := range t.Nodes {
		nodes[n.ID] = true
	}
	for _, pair := range strings.Split(s, ",") {
		node, q, ok := strings.Cut(strings.TrimSpace(pair), "=")
		id, err := strconv.Atoi(node)
		switch {
		case !ok || err != nil:
			return nil, usagef("%s: %q is not NODE=QUANTITY", flag, clip(pair))
		case !nodes[id]:
			return nil, usagef("%s: %d is not a NUMA node of this machine", flag, id)
		}
		if _, dup := out[id]; dup {
			return nil, usagef("%s: node %d named twice", flag, id)
		}
		b, err := quantityBytes(fmt.Sprintf("%s node %d:", flag, id), q)
		if err != nil {
			return nil, err
		}
		out[id] = b
	}
	return out, nil
}

// maxQuantityText is longer than any quantity a person writes ("1.5Gi",
// "1073741824"); longer text is refused before it is parsed.
const maxQuantityText = 64

// clip shortens text quoted back in an error: the flag's value may be long.
func clip(s string) string {
	if len(s) <= maxQuantityText {
		return s
	}
	return s[:maxQuantityText] + "…"
}

package locality

import (
	"slices"
	"sort"
)

// NodePages counts base pages per NUMA node id.
type NodePages map[int]uint64

// Total is the number of pages on all nodes.
func (p NodePages) Total() uint64 {
	var t uint64
	for _, n := range p {
		t += n
	}
	return t
}

// On is the number of pages on the given nodes.
func (p NodePages) On(nodes []int) uint64 {
	var t uint64
	for _, id := range nodes {
		t += p[id]
	}
	return t
}

// Remote is the number of pages on nodes not in local.
func (p NodePages) Remote(local []int) uint64 { return p.Total() - p.On(local) }

// Add adds q into p.
func (p NodePages) Add(q NodePages) {
	for id, n := range q {
		p[id] += n
	}
}

// Nodes lists the nodes that hold at least one page, sorted.
func (p NodePages) Nodes() []int {
	var out []int
	for id, n := range p {
		if n > 0 {
			out = append(out, id)
		}
	}
	sort.Ints(out)
	return out
}

// RemoteNodes lists the nodes outside local that hold pages, sorted.
func (p NodePages) RemoteNodes(local []int) []int {
	var out []int
	for _, id := range p.Nodes() {
		if !slices.Contains(local, id) {
			out = append(out, id)
		}
	}
	return out
}

// LocalRatio is the whole percentage of pages on local nodes, rounded down so
// that 100 means no remote page at all. No memory counts as fully local.
func LocalRatio(p NodePages, local []int) int {
	total := p.Total()
	if total == 0 {
		return 100
	}
	return int(p.On(local) * 100 / total)
}

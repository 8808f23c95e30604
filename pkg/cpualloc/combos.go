package cpualloc

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// exhaustiveNodes is the largest CPU-node count for which every node subset is
// precomputed (2^12 subsets); bigger machines get nearest-neighbour sets plus,
// per decision, the k nodes with the most room (see search.go).
const exhaustiveNodes = 12

// combo is a set of two or more nodes a request may span, with the two
// locality measures that rank it: sockets touched, then the summed SLIT
// distance over every pair of its nodes.
type combo struct {
	nodes    []int // node indices, ascending
	sockets  int
	distance int
}

func (ix *index) newCombo(nodes []int) combo {
	var sockets []int
	dist := 0
	for i, a := range nodes {
		for _, s := range ix.nodes[a].sockets {
			if !slices.Contains(sockets, s) {
				sockets = append(sockets, s)
			}
		}
		for _, b := range nodes[i+1:] {
			dist += ix.distance[a][b]
		}
	}
	return combo{nodes: nodes, sockets: len(sockets), distance: dist}
}

// closer orders combos by locality, then lexicographically by node index.
func closer(a, b combo) int {
	if a.sockets != b.sockets {
		return a.sockets - b.sockets
	}
	if a.distance != b.distance {
		return a.distance - b.distance
	}
	return slices.Compare(a.nodes, b.nodes)
}

func buildCombos(ix *index) ([][]combo, bool) {
	m := len(ix.nodes)
	if m < 2 {
		return nil, true
	}
	out := make([][]combo, m+1)
	if m <= exhaustiveNodes {
		for mask := uint32(1); mask < 1<<m; mask++ {
			k := bits.OnesCount32(mask)
			if k < 2 {
				continue
			}
			nodes := make([]int, 0, k)
			for i := range m {
				if mask&(1<<i) != 0 {
					nodes = append(nodes, i)
				}
			}
			out[k] = append(out[k], ix.newCombo(nodes))
		}
	} else {
		seen := map[string]bool{}
		for start := range m {
			set := []int{start}
			for len(set) < m {
				set = ix.grow(set)
				key := comboKey(set)
				if !seen[key] {
					seen[key] = true
					out[len(set)] = append(out[len(set)], ix.newCombo(slices.Clone(set)))
				}
			}
		}
	}
	for _, cs := range out {
		slices.SortFunc(cs, closer)
	}
	return out, m <= exhaustiveNodes
}

// grow adds to set the node that keeps it most local: fewest sockets, then
// the smallest summed distance to the members, then the lowest index.
func (ix *index) grow(set []int) []int {
	best := combo{sockets: -1}
	for n := range ix.nodes {
		if slices.Contains(set, n) {
			continue
		}
		cand := ix.newCombo(sortedWith(set, n))
		if best.sockets < 0 || closer(cand, best) < 0 {
			best = cand
		}
	}
	return best.nodes
}

func sortedWith(set []int, n int) []int {
	out := append(slices.Clone(set), n)
	slices.Sort(out)
	return out
}

func comboKey(nodes []int) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

package cpualloc

import (
	"cmp"
	"slices"
)

// evaluator says whether a domain can hold the request and how well.
type evaluator func(d domain) (fits bool, g grade)

// grade is a domain's quality for a policy; 0 is ideal, higher is worse, in
// every field. tier ranks before the L3 groups a domain needs: it is a
// property the policy is worth leaving an L3 for (spread's threads on
// separate cores). shared (cores the request would share with other pods)
// and pref (a packing preference such as breaking no whole core) rank after
// locality: they must never cost the request its L3 group.
type grade struct{ tier, shared, pref int }

// search picks the domain for the request. Single-node domains come first:
// every L3 group and every node, ranked by (sockets the fill spans, tier, L3
// groups it spans, L3 group before node, shared, pref, strategy on its node,
// strategy on the domain, lowest index). Only when none
// fits does it look at k-node sets, k = 2, 3, ..., ranked by (sockets touched,
// k, L3 groups a fill needs, summed pair distance, tier, shared, pref,
// strategy, lowest node ids). The strategy compares the
// policy's capacity: fewest free first for most-allocated, most free first
// for least-allocated. The node is compared before the L3 group itself, as
// kubelet packs nodes before the cores in them: most-allocated then takes the
// best-fitting L3 of the fullest node, so the containers of one pod placed
// one after another stay on the node and socket the first one took, and
// least-allocated an empty L3 on the emptiest node, not merely the first
// empty L3.
func (v *view) search(eval evaluator) (domain, bool) {
	type rank struct {
		sockets, tier, l3s, kind, shared, pref, room, nodeRoom int
		memLeft                                                uint64
	}
	var best domain
	var bestRank rank
	found := false
	consider := func(d domain, kind, node int) {
		var memLeft uint64
		if v.mem != nil {
			if !v.mem.holds(v.ix.single[node]) {
				return
			}
			memLeft = v.mem.left(v.ix.single[node])
		}
		fits, g := eval(d)
		if !fits {
			return
		}
		r := rank{1, g.tier, 1, kind, g.shared, g.pref, v.strategyKey(v.cap.of(d)), v.strategyKey(v.cap.node[node]), memLeft}
		if kind > 0 {
			n := v.ix.nodes[node]
			span := v.spanMeasure()
			if v.spanWhole && v.aux.node[node] < v.n {
				span = v.cap // whole cores cannot cover it: the fill packs by usable threads
			}
			r.sockets, r.l3s = needed(n.cells, span.cell, v.n), needed(n.l3s, span.l3, v.n)
		}
		if !found || cmp.Or(cmp.Compare(r.sockets, bestRank.sockets), cmp.Compare(r.tier, bestRank.tier),
			cmp.Compare(r.l3s, bestRank.l3s), cmp.Compare(r.kind, bestRank.kind), cmp.Compare(r.shared, bestRank.shared),
			cmp.Compare(r.pref, bestRank.pref), cmp.Compare(r.nodeRoom, bestRank.nodeRoom),
			cmp.Compare(r.room, bestRank.room), cmp.Compare(bestRank.memLeft, r.memLeft)) < 0 {
			best, bestRank, found = d, r, true
		}
	}
	for li, l3 := range v.ix.l3s {
		consider(domain{l3: li}, 0, l3.node)
	}
	for ni := range v.ix.nodes {
		consider(domain{l3: -1, nodes: v.ix.single[ni]}, 1, ni)
	}
	if found {
		return best, true
	}
	// Sockets rank before nodes: after the fewest nodes that fit, larger
	// sets are tried only while they could touch fewer sockets (k nodes
	// touch at least k / (most nodes in a socket) of them).
	bestSockets := 0
	for k := 2; k < len(v.ix.combos); k++ {
		if found && (k+v.ix.nodesPerSocket-1)/v.ix.nodesPerSocket >= bestSockets {
			break
		}
		if d, sockets, ok := v.searchCombos(eval, v.candidates(k)); ok && (!found || sockets < bestSockets) {
			best, bestSockets, found = d, sockets, true
		}
	}
	return best, found
}

// candidates are the k-node sets to try: the precomputed ones, plus on
// machines too big for every subset the k nodes with the most room, which
// holds the request whenever any k nodes do.
func (v *view) candidates(k int) []combo {
	if v.ix.exhaustive {
		return v.ix.combos[k]
	}
	order := make([]int, len(v.ix.nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return v.cap.node[b] - v.cap.node[a] })
	top := slices.Clone(order[:k])
	slices.Sort(top)
	return append(slices.Clone(v.ix.combos[k]), v.ix.newCombo(top))
}

func (v *view) searchCombos(eval evaluator, combos []combo) (domain, int, bool) {
	type rank struct {
		sockets, l3s, distance, tier, shared, pref, room int
		memLeft                                          uint64
	}
	var best domain
	var bestRank rank
	var bestNodes []int
	found := false
	for _, c := range combos {
		var memLeft uint64
		if v.mem != nil {
			if !v.mem.holds(c.nodes) {
				continue
			}
			memLeft = v.mem.left(c.nodes)
		}
		d := domain{l3: -1, nodes: c.nodes}
		fits, g := eval(d)
		if !fits {
			continue
		}
		r := rank{c.sockets, v.l3sAcross(c.nodes), c.distance, g.tier, g.shared, g.pref, v.strategyKey(v.cap.of(d)), memLeft}
		order := cmp.Or(cmp.Compare(r.sockets, bestRank.sockets), cmp.Compare(r.l3s, bestRank.l3s),
			cmp.Compare(r.distance, bestRank.distance),
			cmp.Compare(r.tier, bestRank.tier), cmp.Compare(r.shared, bestRank.shared), cmp.Compare(r.pref, bestRank.pref),
			cmp.Compare(r.room, bestRank.room), cmp.Compare(bestRank.memLeft, r.memLeft),
			slices.Compare(c.nodes, bestNodes))
		if !found || order < 0 {
			best, bestRank, bestNodes, found = d, r, d.nodes, true
		}
	}
	return best, bestRank.sockets, found
}

// spanMeasure is what a fill is packed by, so what the sockets and L3
// groups a domain's fill spans are counted in: the policy's capacity, or,
// for a policy that fills whole cores first (spanWhole), whole-core CPUs.
func (v *view) spanMeasure() measure {
	if v.spanWhole {
		return v.aux
	}
	return v.cap
}

func (v *view) strategyKey(room int) int {
	if v.req.NUMAStrategy == LeastAllocated {
		return -room
	}
	return room
}

// l3sAcross counts the L3 groups of nodes a fill of the request needs: the
// fewest whose capacity adds up to it, taken largest first.
func (v *view) l3sAcross(nodes []int) int {
	count, got := 0, 0
	lastRoom, last := -1, -1
	for got < v.n {
		big, bigRoom := -1, 0
		for _, n := range nodes {
			for _, l := range v.ix.nodes[n].l3s {
				// Groups are taken largest first (ties: lowest index), so a
				// group is still free when it comes after the last taken.
				r := v.spanMeasure().l3[l]
				if lastRoom >= 0 && (r > lastRoom || r == lastRoom && l <= last) {
					continue
				}
				if r > bigRoom || r == bigRoom && r > 0 && l < big {
					big, bigRoom = l, r
				}
			}
		}
		if big < 0 {
			break
		}
		got, last, lastRoom = got+bigRoom, big, bigRoom
		count++
	}
	return count
}

package cpuset

import (
	"cmp"
	"slices"
)

// evaluator says whether a domain can hold the request and how well.
type evaluator func(d domain) (fits bool, g grade)

// grade is a domain's quality for a policy; 0 is ideal, higher is worse, in
// both fields. tier ranks before "L3 before node": it is a property the
// policy is worth leaving an L3 for (spread's threads on separate cores).
// pref ranks after it: a packing preference (break no whole core) that must
// never cost the request its locality.
type grade struct{ tier, pref int }

// search picks the domain for the request. Single-node domains come first:
// every L3 group and every node, ranked by (tier, L3 before node, pref,
// strategy on the domain, strategy on its node, lowest index). Only when none
// fits does it look at k-node sets, k = 2, 3, ..., ranked by (sockets touched,
// summed pair distance, tier, pref, strategy, lowest node ids). The strategy compares the
// policy's capacity: fewest free first for most-allocated, most free first
// for least-allocated; comparing the L3's node second makes least-allocated
// pick an empty L3 on the emptiest node, not merely the first empty L3.
func (v *view) search(eval evaluator) (domain, bool) {
	type rank struct{ tier, kind, pref, room, nodeRoom int }
	var best domain
	var bestRank rank
	found := false
	consider := func(d domain, kind, node int) {
		fits, g := eval(d)
		if !fits {
			return
		}
		r := rank{g.tier, kind, g.pref, v.strategyKey(v.cap.of(d)), v.strategyKey(v.cap.node[node])}
		if !found || cmp.Or(cmp.Compare(r.tier, bestRank.tier), cmp.Compare(r.kind, bestRank.kind),
			cmp.Compare(r.pref, bestRank.pref), cmp.Compare(r.room, bestRank.room),
			cmp.Compare(r.nodeRoom, bestRank.nodeRoom)) < 0 {
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
	for k := 2; k < len(v.ix.combos); k++ {
		if d, ok := v.searchCombos(eval, v.candidates(k)); ok {
			return d, true
		}
	}
	return domain{}, false
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

func (v *view) searchCombos(eval evaluator, combos []combo) (domain, bool) {
	type rank struct{ sockets, distance, tier, pref, room int }
	var best domain
	var bestRank rank
	var bestNodes []int
	found := false
	for _, c := range combos {
		d := domain{l3: -1, nodes: c.nodes}
		fits, g := eval(d)
		if !fits {
			continue
		}
		r := rank{c.sockets, c.distance, g.tier, g.pref, v.strategyKey(v.cap.of(d))}
		order := cmp.Or(cmp.Compare(r.sockets, bestRank.sockets), cmp.Compare(r.distance, bestRank.distance),
			cmp.Compare(r.tier, bestRank.tier), cmp.Compare(r.pref, bestRank.pref), cmp.Compare(r.room, bestRank.room),
			slices.Compare(c.nodes, bestNodes))
		if !found || order < 0 {
			best, bestRank, bestNodes, found = d, r, d.nodes, true
		}
	}
	return best, found
}

func (v *view) strategyKey(room int) int {
	if v.req.NUMAStrategy == LeastAllocated {
		return -room
	}
	return room
}

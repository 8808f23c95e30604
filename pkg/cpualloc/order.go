package cpualloc

// visit is one group in a fill order and how much the fill takes from it.
type visit struct{ group, amount int }

// packOrder lists groups in the order a packing fill of n visits them. While
// something is left it takes the best-fitting group (the one with the least
// room that still holds everything left; ties: earliest in groups) and stops,
// or, when no group holds it all, the group with the most room, whole (ties:
// earliest), and goes on. This spans the fewest groups a greedy fill can and
// leaves the biggest holes elsewhere intact. With a cost (cost(g, a): how
// many subgroups taking a from g spreads over), the fill may instead take a
// different group in part, when that spans as few groups at a lower summed
// cost: the part then lands where it fits in fewest subgroups rather than
// wherever the largest groups leave it. Groups not needed follow with an
// amount equal to their room, so policies that go round the cores several
// times (spread) still see every group.
func packOrder(groups []int, room []int, n int, cost func(g, amount int) int) []visit {
	out := make([]visit, 0, len(groups))
	p, left := -1, n // the group taken in part, and how much of it
	for left > 0 {
		if p = bestFit(groups, room, left, out, cost); p >= 0 {
			break
		}
		w := largestExcept(groups, room, -1, out)
		if w < 0 {
			break
		}
		out = append(out, visit{w, room[w]})
		left -= room[w]
	}
	if p >= 0 && cost != nil && len(out) > 0 {
		used, c := len(out)+1, cost(p, left)
		for _, w := range out {
			c += cost(w.group, w.amount)
		}
		for _, q := range groups {
			if alt, altLeft, altCost := wholeAround(groups, room, n, q, cost); altLeft >= 0 && len(alt)+1 == used && altCost < c {
				out, p, left, c = alt, q, altLeft, altCost
			}
		}
	}
	if p >= 0 {
		out = append(out, visit{p, left})
	}
	for _, g := range groups {
		if room[g] > 0 && !visited(out, g) {
			out = append(out, visit{g, room[g]})
		}
	}
	return out
}

// bestFit is the group not in out that holds n at the least cost, then with
// the least room (ties: earliest), or -1.
func bestFit(groups, room []int, n int, out []visit, cost func(g, amount int) int) int {
	fit, fitCost := -1, 0
	for _, g := range groups {
		if room[g] < n || visited(out, g) {
			continue
		}
		c := 0
		if cost != nil {
			c = cost(g, n)
		}
		if fit < 0 || c < fitCost || c == fitCost && room[g] < room[fit] {
			fit, fitCost = g, c
		}
	}
	return fit
}

// wholeAround takes every group but q whole, largest first, until q holds
// what is left; it returns those groups, what q must give (-1 when q never
// can) and the summed cost.
func wholeAround(groups, room []int, n, q int, cost func(g, amount int) int) ([]visit, int, int) {
	if room[q] <= 0 {
		return nil, -1, 0
	}
	var out []visit
	c := 0
	for n > room[q] {
		w := largestExcept(groups, room, q, out)
		if w < 0 {
			return nil, -1, 0
		}
		out = append(out, visit{w, room[w]})
		c += cost(w, room[w])
		n -= room[w]
	}
	return out, n, c + cost(q, n)
}

// largestExcept is the group with the most room (ties: earliest) that is not
// skip and not in out yet, or -1.
func largestExcept(groups, room []int, skip int, out []visit) int {
	big := -1
	for _, g := range groups {
		if g == skip || room[g] <= 0 || visited(out, g) {
			continue
		}
		if big < 0 || room[g] > room[big] {
			big = g
		}
	}
	return big
}

func visited(out []visit, g int) bool {
	for _, v := range out {
		if v.group == g {
			return true
		}
	}
	return false
}

// needed counts the groups a fill of n would spread over: the fewest whose
// room adds up to n, taken largest first. At least 1.
func needed(groups, room []int, n int) int {
	count, got := 0, 0
	var used uint64
	for got < n && count < len(groups) && count < 64 {
		big := -1
		for i, g := range groups {
			if i < 64 && used&(1<<i) == 0 && (big < 0 || room[g] > room[groups[big]]) {
				big = i
			}
		}
		if big < 0 || room[groups[big]] <= 0 {
			break
		}
		used |= 1 << big
		got += room[groups[big]]
		count++
	}
	return max(count, 1)
}

// coreOrder flattens domain d into cores in packing order for n units of
// measure m: nodes (for a multi-node domain), then each node's cells
// (sockets), then each cell's L3 groups, each level by packOrder for the
// amount its parent gives it, then each group's cores by leaf.
func (v *view) coreOrder(d domain, m measure, n int, leaf func(cores, out []int) []int) []int {
	out := make([]int, 0, 64)
	if d.l3 >= 0 {
		return leaf(v.ix.l3s[d.l3].cores, out)
	}
	nodes := []visit{{d.nodes[0], n}}
	if len(d.nodes) > 1 {
		nodes = packOrder(d.nodes, m.node, n, func(g, a int) int { return v.nodeCost(m, g, a) })
	}
	for _, nv := range nodes {
		cells := v.ix.nodes[nv.group].cells
		for _, cv := range packOrder(cells, m.cell, nv.amount, func(c, a int) int { return needed(v.ix.cells[c].l3s, m.l3, a) }) {
			for _, lv := range packOrder(v.ix.cells[cv.group].l3s, m.l3, cv.amount, nil) {
				out = leaf(v.ix.l3s[lv.group].cores, out)
			}
		}
	}
	return out
}

// nodeCost ranks taking a units of m from node g: sockets it spans first,
// then L3 groups.
func (v *view) nodeCost(m measure, g, a int) int {
	n := v.ix.nodes[g]
	return needed(n.cells, m.cell, a)<<16 + needed(n.l3s, m.l3, a)
}

// byID keeps a group's cores in id order.
func byID(cores, out []int) []int { return append(out, cores...) }

// fragmentsFirst puts cores with a usable thread that are not whole free
// cores (a sibling is held by another workload, reserved, isolated, offline
// or burst-loaded) before whole free cores, so a spread request uses
// left-over threads before it breaks a core a full-pcpus request could use.
func (v *view) fragmentsFirst(cores, out []int) []int {
	for _, c := range cores {
		if v.free[c] > 0 && !v.whole[c] {
			out = append(out, c)
		}
	}
	for _, c := range cores {
		if v.whole[c] {
			out = append(out, c)
		}
	}
	return out
}

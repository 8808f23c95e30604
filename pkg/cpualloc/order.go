package cpualloc

import "slices"

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
// measure m: the cells (node parts of a socket) to fill, node by node, or
// socket by socket where that spans fewer sockets; then each cell's L3
// groups by packOrder for the amount its cell gives; then each group's cores
// by leaf.
func (v *view) coreOrder(d domain, m measure, n int, leaf func(cores, out []int) []int) []int {
	out := make([]int, 0, 64)
	if d.l3 >= 0 {
		return leaf(v.ix.l3s[d.l3].cores, out)
	}
	cells := v.cellsOf(d.nodes, m, n)
	if len(d.nodes) > 1 {
		if alt := v.cellsAcross(d.nodes, m, n); v.fewerSockets(alt, cells, n) {
			cells = alt
		}
	}
	for _, cv := range cells {
		for _, lv := range packOrder(v.ix.cells[cv.group].l3s, m.l3, cv.amount, nil) {
			out = leaf(v.ix.l3s[lv.group].cores, out)
		}
	}
	return out
}

// cellsOf orders the cells of nodes for a fill of n units of m node by
// node: the nodes by packOrder (the fewest sockets each spans, then L3
// groups), then each node's cells by packOrder.
func (v *view) cellsOf(nodes []int, m measure, n int) []visit {
	cellCost := func(c, a int) int { return needed(v.ix.cells[c].l3s, m.l3, a) }
	if len(nodes) == 1 {
		return packOrder(v.ix.nodes[nodes[0]].cells, m.cell, n, cellCost)
	}
	out := make([]visit, 0, len(v.ix.cells))
	for _, nv := range packOrder(nodes, m.node, n, func(g, a int) int {
		nd := v.ix.nodes[g]
		return needed(nd.cells, m.cell, a)<<16 + needed(nd.l3s, m.l3, a)
	}) {
		out = append(out, packOrder(v.ix.nodes[nv.group].cells, m.cell, nv.amount, cellCost)...)
	}
	return out
}

// fewerSockets reports whether the fill of n along cells a spans fewer
// sockets than along b, or as many and fewer nodes.
func (v *view) fewerSockets(a, b []visit, n int) bool {
	sa, na := v.spanOf(a, n)
	sb, nb := v.spanOf(b, n)
	return sa < sb || sa == sb && na < nb
}

// spanOf counts the sockets and nodes of the cells a fill of n takes from.
func (v *view) spanOf(cells []visit, n int) (sockets, nodes int) {
	var ss, ns []int
	for _, cv := range cells {
		if n <= 0 {
			break
		}
		if cv.amount <= 0 {
			continue
		}
		n -= cv.amount
		c := v.ix.cells[cv.group]
		if !slices.Contains(ss, c.socket) {
			ss = append(ss, c.socket)
		}
		if !slices.Contains(ns, c.node) {
			ns = append(ns, c.node)
		}
	}
	return len(ss), len(ns)
}

// cellsAcross orders the cells of several nodes for a fill of n units of m:
// sockets first, by packOrder over what the nodes hold in each socket (the
// fewest sockets, then the fewest cells, then L3 groups), then the cells of
// each socket by packOrder. Packing node by node instead spans a socket more
// where a node spans two sockets: two half-free nodes whose other sockets
// are free take three sockets where those two free sockets suffice.
func (v *view) cellsAcross(nodes []int, m measure, n int) []visit {
	var sockets []int // socket ids, first seen first
	var parts [][]int // the cells of nodes in each socket
	var l3s [][]int   // their L3 groups
	for _, nd := range nodes {
		for _, c := range v.ix.nodes[nd].cells {
			i := slices.Index(sockets, v.ix.cells[c].socket)
			if i < 0 {
				i = len(sockets)
				sockets, parts, l3s = append(sockets, v.ix.cells[c].socket), append(parts, nil), append(l3s, nil)
			}
			parts[i] = append(parts[i], c)
			l3s[i] = append(l3s[i], v.ix.cells[c].l3s...)
		}
	}
	groups, room := make([]int, len(sockets)), make([]int, len(sockets))
	for i, cs := range parts {
		groups[i] = i
		for _, c := range cs {
			room[i] += m.cell[c]
		}
	}
	cellCost := func(c, a int) int { return needed(v.ix.cells[c].l3s, m.l3, a) }
	out := make([]visit, 0, len(v.ix.cells))
	for _, sv := range packOrder(groups, room, n, func(s, a int) int { return needed(parts[s], m.cell, a)<<16 + needed(l3s[s], m.l3, a) }) {
		out = append(out, packOrder(parts[sv.group], m.cell, sv.amount, cellCost)...)
	}
	return out
}

// byID keeps a group's cores in id order.
func byID(cores, out []int) []int { return append(out, cores...) }

// fragmentsFirst puts a hybrid part's single-thread cores (taken whole,
// they share and break nothing), then cores with a usable thread that are
// not whole free cores (a sibling is held by another workload, reserved,
// isolated, offline or burst-loaded), before wider whole free cores, so a
// spread request uses left-over threads before it breaks a core a
// full-pcpus request could use.
func (v *view) fragmentsFirst(cores, out []int) []int {
	for _, c := range cores {
		if v.narrow(c) {
			out = append(out, c)
		}
	}
	for _, c := range cores {
		if v.free[c] > 0 && !v.whole[c] {
			out = append(out, c)
		}
	}
	for _, c := range cores {
		if v.whole[c] && !v.narrow(c) {
			out = append(out, c)
		}
	}
	return out
}

package cpualloc

import (
	"fmt"
	"slices"
	"strings"
)

// distributeAcrossNUMA spreads the request evenly over the fewest nodes that
// can each hold their share. A request that fits one node stays in one node:
// splitting it would only add remote memory traffic. Shares are counted in
// whole cores when the request is a multiple of the SMT width (so shares
// differ by at most one core), else in CPUs; the nodes with the most room take
// the larger shares. Capacity is usable threads; a domain is tier 0 when whole
// free cores cover every share (up to its part below one core).
func (v *view) distributeAcrossNUMA() ([]int, error) {
	for c, f := range v.free {
		v.cap.core[c], v.aux.core[c] = f, 0
		if v.whole[c] {
			v.aux.core[c] = v.ix.threads
		}
	}
	v.ix.sum(v.cap)
	v.ix.sum(v.aux)
	// Shares of whole cores are filled with whole cores first: a domain's
	// L3 groups are counted in theirs (see fillShare).
	v.spanWhole = v.ix.uniform && v.n%v.ix.threads == 0
	rank := func(d domain) (bool, grade) {
		fits, tier, short := true, 0, 0
		for _, s := range v.shares(d) {
			fits = fits && s.amount > 0 && s.amount <= v.capOf(s.group, d)
			wholeNeed := s.amount - s.amount%v.ix.threads
			tier = max(tier, boolTier(v.auxOf(s.group, d) < wholeNeed))
			short += max(0, wholeNeed-v.auxOf(s.group, d))
		}
		// Among domains whose whole cores cannot cover the shares, the one
		// short of the fewest takes the fewest left-overs beside other
		// workloads.
		return fits, grade{tier: tier, shared: short}
	}
	d, ok := v.search(rank)
	if v.n%v.ix.threads == 0 && v.ix.threads > 1 && (!ok || len(d.nodes) > 1) {
		// A split within a core of even (see rebalance) serves where no
		// split in whole cores fits, or where it spans fewer sockets or
		// nodes than the best that does; at the same span, whole cores.
		v.uneven = true
		if u, found := v.search(rank); found && (!ok || v.spanLess(u, d)) {
			d, ok = u, true
		} else {
			v.uneven = false
		}
		defer func() { v.uneven = false }() // the fill below splits the same way
	}
	if !ok {
		if free := v.usableTotal(); free < v.n {
			return nil, notEnough(DistributeAcrossNUMA, v.n, free)
		}
		return nil, shortf("%s: requested=%d cannot be split evenly over the NUMA nodes (free CPUs per node: %s)",
			DistributeAcrossNUMA, v.n, v.freePerNode())
	}
	out := make([]int, 0, v.n)
	for _, s := range v.shares(d) {
		part := d
		if d.l3 < 0 {
			part = domain{l3: -1, nodes: v.ix.single[s.group]}
		}
		out = v.fillShare(part, s.amount, out)
	}
	return out, nil
}

// shares splits the request over the nodes of d; a single-node or L3 domain
// gets the whole request (its group is then the L3 or node index). The
// returned slice is reused by the next call.
func (v *view) shares(d domain) []visit {
	out := v.shareBuf[:0]
	if d.l3 >= 0 {
		v.shareBuf = append(out, visit{d.l3, v.n})
		return v.shareBuf
	}
	if len(d.nodes) == 1 {
		v.shareBuf = append(out, visit{d.nodes[0], v.n})
		return v.shareBuf
	}
	unit := 1
	if v.n%v.ix.threads == 0 {
		unit = v.ix.threads
	}
	units, k := v.n/unit, len(d.nodes)
	for _, n := range d.nodes {
		out = append(out, visit{group: n})
	}
	// The nodes with the most room take the larger shares; ties: lowest id.
	slices.SortStableFunc(out, func(a, b visit) int { return v.cap.node[b.group] - v.cap.node[a.group] })
	for i := range out {
		out[i].amount = units / k * unit
		if i < units%k {
			out[i].amount += unit
		}
	}
	if v.uneven && unit > 1 && !v.sharesFit(out) {
		v.rebalance(out, unit)
	}
	v.shareBuf = out
	return out
}

// spanLess says whether node set a spans fewer sockets than b, or as
// many and fewer nodes.
func (v *view) spanLess(a, b domain) bool {
	sa, sb := v.socketsOf(a.nodes), v.socketsOf(b.nodes)
	return sa < sb || sa == sb && len(a.nodes) < len(b.nodes)
}

func (v *view) socketsOf(nodes []int) int {
	var seen []int
	for _, n := range nodes {
		for _, s := range v.ix.nodes[n].sockets {
			if !slices.Contains(seen, s) {
				seen = append(seen, s)
			}
		}
	}
	return len(seen)
}

func (v *view) sharesFit(shares []visit) bool {
	for _, s := range shares {
		if s.amount > v.cap.node[s.group] {
			return false
		}
	}
	return true
}

// rebalance moves CPUs of a split in whole cores that some node cannot
// hold to the nodes with room, keeping every share within one core of the
// others (what an even split promises): 40 CPUs over nodes with 25 and 19
// free are 21 + 19. The shares are left as they were when no such split
// exists. Shares are sorted by room, most first.
func (v *view) rebalance(shares []visit, core int) {
	n, k := v.n, len(shares)
	for lo := n / k; lo >= 0 && lo >= n/k-core; lo-- {
		left := n - k*lo
		ok := true
		for _, s := range shares {
			ok = ok && v.cap.node[s.group] >= lo
		}
		if !ok {
			continue
		}
		amounts := make([]int, k)
		for i, s := range shares {
			amounts[i] = lo + min(left, v.cap.node[s.group]-lo, core)
			left -= amounts[i] - lo
		}
		if left == 0 {
			for i := range shares {
				shares[i].amount = amounts[i]
			}
			return
		}
	}
}

func (v *view) capOf(group int, d domain) int {
	if d.l3 >= 0 {
		return v.cap.l3[group]
	}
	return v.cap.node[group]
}

func (v *view) auxOf(group int, d domain) int {
	if d.l3 >= 0 {
		return v.aux.l3[group]
	}
	return v.aux.node[group]
}

// fillShare takes n CPUs from part: whole free cores while at least a core's
// worth is left (the widest first, then narrower whole cores that fit what
// is left), then threads of partly taken cores (left-overs), and only then
// breaks a whole core for the rest.
func (v *view) fillShare(part domain, n int, out []int) []int {
	// A share of whole cores that whole cores can give is packed by their
	// capacity, so it spans the fewest L3 groups of whole cores rather than
	// of usable threads, whose left-overs the fill passes over.
	// A share with a part below one core is packed the same way, for its
	// whole cores and one more, which the part then breaks or sits beside
	// (in the L3 groups already taken, see below).
	m, target := v.cap, n
	if v.spanWhole && n%v.ix.threads == 0 && v.aux.of(part) >= n {
		m = v.aux
	} else if up := n - n%v.ix.threads + v.ix.threads; v.ix.uniform && n%v.ix.threads != 0 && v.aux.of(part) >= up {
		m, target = v.aux, up
	}
	order := v.coreOrder(part, m, target, byID)
	want := len(out) + n
	used := make([]bool, len(order))
	// A whole core narrower than the SMT width (a hybrid part's efficiency
	// core) fits a remainder below a wide core's worth: it is taken whole
	// rather than a left-over beside another workload.
	for _, wide := range []bool{true, false} {
		for i, c := range order {
			size := len(v.ix.cores[c].cpus)
			if !used[i] && v.whole[c] && (size == v.ix.threads) == wide && size <= want-len(out) {
				out = append(out, v.ix.cores[c].cpus...)
				used[i] = true
			}
		}
	}
	// What is left goes first to the L3 groups the whole cores are in: an
	// L3 group more costs the workload more than a core it breaks there.
	touched := make([]bool, len(v.ix.l3s))
	for i, c := range order {
		if used[i] {
			touched[v.ix.cores[c].l3] = true
		}
	}
	for _, inside := range []bool{true, false} {
		for _, whole := range []bool{false, true} {
			for i, c := range order {
				if !used[i] && v.whole[c] == whole && touched[v.ix.cores[c].l3] == inside {
					out = v.take(c, want-len(out), out)
				}
			}
		}
	}
	return out
}

func (v *view) freePerNode() string {
	parts := make([]string, len(v.ix.nodes))
	for i, n := range v.ix.nodes {
		free := 0
		for _, c := range n.cores {
			free += v.free[c]
		}
		parts[i] = fmt.Sprintf("%d=%d", n.id, free)
	}
	return strings.Join(parts, " ")
}

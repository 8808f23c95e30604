package cpuset

import "cmp"

// fullPCPUsThenThreads serves a count n = q*t + r (t the SMT width, 0 < r < t)
// that full-pcpus cannot. Its aim is q whole free cores plus r threads of one
// more core: a workload that asked for 3 CPUs on a two-thread machine gets one
// core to itself and one thread, instead of no binding at all.
//
// A domain fits when it has n usable threads, so the request is refused only
// when the machine has fewer than n usable CPUs, and it spans no more nodes
// than its CPUs need. A domain that offers the aim (q whole cores and, for
// the remainder, a core with r usable threads that is not whole, or one more
// whole core) is tier 0; tier ranks before "L3 before node", so the request
// leaves an L3 group to get whole cores, but never a node: a node without
// the whole cores beats two nodes with them, since remote memory hurts more
// than a shared core. Among tier-0 domains, pref 0 marks those where a
// left-over core (its siblings held by others, reserved, isolated or
// offline) can take the remainder: breaking a whole core costs a later
// full-pcpus request a core, using a left-over costs nobody anything.
//
// Capacity for the strategy is usable threads, the measure the fit is made on.
func (v *view) fullPCPUsThenThreads() ([]int, error) {
	t := v.ix.threads
	bulk, r := v.n-v.n%t, v.n%t
	for c, w := range v.whole {
		v.cap.core[c], v.aux.core[c], v.pref.core[c] = v.free[c], 0, 0
		switch {
		case w:
			v.aux.core[c] = t
		case v.free[c] >= r:
			v.pref.core[c] = 1
		}
	}
	v.ix.sum(v.cap)
	v.ix.sum(v.aux)
	v.ix.sum(v.pref)
	d, ok := v.search(func(d domain) (bool, grade) {
		whole, leftover := v.aux.of(d), v.pref.of(d) > 0
		aim := whole >= bulk && (leftover || whole > bulk)
		return v.cap.of(d) >= v.n, grade{tier: boolTier(!aim), pref: boolTier(aim && !leftover)}
	})
	if !ok {
		return nil, notEnough(FullPCPUsThenThreads, v.n, v.usableTotal())
	}
	out := make([]int, 0, v.n)
	var took []int // cores used so far
	if want := min(bulk, v.aux.of(d)); want > 0 {
		for _, c := range v.coreOrder(d, v.aux, want, byID) {
			if len(out) == want {
				break
			}
			if v.whole[c] {
				out = append(out, v.ix.cores[c].cpus...)
				took = append(took, c)
			}
		}
	}
	for len(out) < v.n {
		c := v.nextCore(d, took, v.n-len(out))
		out = v.take(c, v.n-len(out), out)
		took = append(took, c)
	}
	return out, nil
}

// nextCore picks the core of d, not in took, that gives the next of the m
// threads still wanted: one that can give all m (so the request holds as few
// cores in part as it can), then a left-over before a whole core, then one
// in an L3 group the request already uses, then in a node it uses (so the
// threads stay near each other), then a best fit (fewest usable threads when
// it can give all m, leaving bigger left-overs for bigger remainders; the
// most when it cannot), then the lowest index. d has enough usable threads,
// so such a core exists.
func (v *view) nextCore(d domain, took []int, m int) int {
	type rank struct{ short, broken, distance, fit int }
	best, bestRank := -1, rank{}
	consider := func(c int) {
		f := v.free[c]
		if f == 0 || containsInt(took, c) {
			return
		}
		k := rank{boolTier(f < m), boolTier(v.whole[c]), v.distanceTo(c, took), f}
		if f < m {
			k.fit = -f
		}
		if best < 0 || cmp.Or(cmp.Compare(k.short, bestRank.short), cmp.Compare(k.broken, bestRank.broken),
			cmp.Compare(k.distance, bestRank.distance), cmp.Compare(k.fit, bestRank.fit)) < 0 {
			best, bestRank = c, k
		}
	}
	if d.l3 >= 0 {
		for _, c := range v.ix.l3s[d.l3].cores {
			consider(c)
		}
		return best
	}
	for _, n := range d.nodes {
		for _, c := range v.ix.nodes[n].cores {
			consider(c)
		}
	}
	return best
}

// distanceTo is 0 when core c shares an L3 group with one of the cores in
// took, 1 when it shares a node with one, 2 otherwise.
func (v *view) distanceTo(c int, took []int) int {
	dist := 2
	for _, o := range took {
		switch {
		case v.ix.cores[o].l3 == v.ix.cores[c].l3:
			return 0
		case v.ix.cores[o].node == v.ix.cores[c].node:
			dist = 1
		}
	}
	return dist
}

package cpualloc

import "cmp"

// fullPCPUsThenThreads serves a count n = q*t + r (t the SMT width, 0 < r < t)
// that full-pcpus cannot. Its aim is q whole free cores plus r threads of one
// more core: a workload that asked for 3 CPUs on a two-thread machine gets one
// core to itself and one thread, instead of no binding at all.
//
// A domain fits when it has n usable threads, so the request is refused only
// when the machine has fewer than n usable CPUs, and it spans no more nodes
// than its CPUs need. Among fitting domains of equal locality (sockets, L3
// groups) it ranks by the cores the request would share with other pods
// (threads it must take from left-over cores, whose siblings others hold),
// then by whole cores it would break (the remainder taken from a whole free
// core). A shared core costs the workload throughput for as long as it runs;
// a broken core only costs a later whole-core request a choice, and
// measured on the packing stream (docs/benchmarks.md) the remainder taken
// from a whole core leaves fewer pods on shared cores at the same admissions.
//
// Capacity for the strategy is usable threads, the measure the fit is made on.
func (v *view) fullPCPUsThenThreads() ([]int, error) {
	t := v.ix.threads
	bulk := v.n - v.n%t
	for c, w := range v.whole {
		v.cap.core[c], v.aux.core[c] = v.free[c], 0
		if w {
			v.aux.core[c] = len(v.ix.cores[c].cpus)
		}
	}
	v.ix.sum(v.cap)
	v.ix.sum(v.aux)
	d, ok := v.search(func(d domain) (bool, grade) {
		whole := v.aux.of(d)
		if whole >= v.n {
			return v.cap.of(d) >= v.n, grade{pref: boolTier(v.n%t != 0)}
		}
		return v.cap.of(d) >= v.n, grade{shared: v.n - whole}
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
			// A hybrid part's cores differ in width: take only cores that
			// fit in what is left of the whole-core part.
			if v.whole[c] && len(v.ix.cores[c].cpus) <= want-len(out) {
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
// cores in part as it can), then one in an L3 group the request already
// uses, then in a node it uses (so the threads stay near each other), then a
// core no other workload uses (one whose sibling is offline, then a whole
// free core) before a left-over beside another workload, then
// a best fit (fewest usable threads when it can give all m, leaving bigger
// left-overs for bigger remainders; the most when it cannot), then the
// lowest index. d has enough usable threads, so such a core exists.
func (v *view) nextCore(d domain, took []int, m int) int {
	type rank struct{ short, distance, shared, fit int }
	best, bestRank := -1, rank{}
	consider := func(c int) {
		f := v.free[c]
		if f == 0 || containsInt(took, c) {
			return
		}
		k := rank{boolTier(f < m), v.distanceTo(c, took), v.shareCost(c), f}
		if f < m {
			k.fit = -f
		}
		if best < 0 || cmp.Or(cmp.Compare(k.short, bestRank.short), cmp.Compare(k.distance, bestRank.distance),
			cmp.Compare(k.shared, bestRank.shared), cmp.Compare(k.fit, bestRank.fit)) < 0 {
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

// shareCost is 0 for a core whose other threads are offline (taking it
// shares nothing and breaks nothing), 1 for a whole free core (breaks it),
// 2 when another workload, reserved or isolated CPUs hold a thread of it.
func (v *view) shareCost(c int) int {
	if v.whole[c] {
		return 1
	}
	for _, id := range v.ix.cores[c].cpus {
		if !v.usable.has(id) {
			return 2
		}
	}
	return 0
}

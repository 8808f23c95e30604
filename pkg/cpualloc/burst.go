package cpualloc

import (
	"cmp"
	"slices"
)

// BurstShare is what a static-burst pod with the given CPU request (in
// millicores) adds to the burst load of each of its cpus CPUs: the request
// split evenly, rounded up so the per-CPU sum never under-counts.
func BurstShare(requestMilli int64, cpus int) int64 {
	if cpus <= 0 || requestMilli <= 0 {
		return 0
	}
	return (requestMilli + int64(cpus) - 1) / int64(cpus)
}

// requestMilli is the pod's CPU request; zero means request == limit.
func (r Request) requestMilli() int64 {
	if r.RequestMilli == 0 {
		return int64(r.CPUs) * 1000
	}
	return r.RequestMilli
}

// staticBurst draws the request's CPUs from CPUs nobody owns exclusively and
// whose burst load leaves room for this pod's share, inside one NUMA node
// (docs/allocator.md#static-burst). Every usable CPU is in one of four
// classes, taken in this order:
//
//	A  a fragment: a free thread of a core that is not whole (a sibling is
//	   owned, reserved, isolated or offline) and carries no burst load;
//	B  a thread of a whole free core, both threads of a core before the next;
//	C  a free thread beside burst load: a physical core shared with another
//	   static-burst pod, the least loaded core first;
//	D  a CPU that carries burst load: stacked on another static-burst pod,
//	   the least loaded CPU first.
//
// So replicas bursting together share no CPU and no physical core while A
// and B last, and fragments go before whole cores. A domain's tier counts
// what its fill would take from D, then C, then B, in that order of weight,
// so the node (or L3 group) chosen is the one where the request contends
// least, then breaks the fewest whole cores. Where it must stack as much on
// one as on another, the one whose CPUs carry the least burst load wins, so
// replicas spread evenly once every CPU carries some.
func (v *view) staticBurst() ([]int, error) {
	for c, f := range v.free {
		v.cap.core[c], v.aux.core[c], v.pref.core[c], v.side.core[c] = f, 0, 0, 0
		v.coreLoad[c] = 0
		if v.loaded {
			for _, id := range v.ix.cores[c].cpus {
				v.coreLoad[c] += v.load[id]
			}
		}
		v.stack.core[c] = int(v.coreLoad[c])
		if v.coreLoad[c] > 0 {
			for _, id := range v.ix.cores[c].cpus {
				if v.usable.has(id) && v.load[id] == 0 {
					v.side.core[c]++ // C
				}
			}
			continue
		}
		v.aux.core[c] = f // B, or A
		if !v.whole[c] {
			v.pref.core[c] = f // A: every usable CPU of the core is unloaded
		}
	}
	v.ix.sum(v.cap)
	v.ix.sum(v.aux)
	v.ix.sum(v.pref)
	if v.loaded {
		v.ix.sum(v.side)
		v.ix.sum(v.stack)
	} else { // no burst load anywhere: no CPU beside it
		clear(v.side.l3)
		clear(v.side.node)
	}
	k := v.n + 1
	d, ok := v.search(func(d domain) (bool, grade) {
		if d.l3 < 0 && len(d.nodes) > 1 || v.cap.of(d) < v.n {
			return false, grade{}
		}
		a := min(v.n, v.pref.of(d))
		b := min(v.n-a, v.aux.of(d)-v.pref.of(d))
		c := min(v.n-a-b, v.side.of(d))
		stacked := v.n - a - b - c
		g := grade{tier: (stacked*k+c)*k + b}
		if stacked > 0 {
			g.shared = v.stack.of(d)
		}
		return true, g
	})
	if !ok {
		most := 0
		for ni := range v.ix.nodes {
			most = max(most, v.cap.node[ni])
		}
		return nil, shortf("%s: not enough CPUs with room for %d millicores each in one NUMA node: requested=%d, available=%d (at most %d on one node)",
			StaticBurst, v.share, v.n, v.usableTotal(), most)
	}
	frag, whole, side, stacked := v.burstBuf[0][:0], v.burstBuf[1][:0], v.burstBuf[2][:0], v.burstBuf[3][:0]
	for _, c := range v.coreOrder(d, v.cap, v.n, byID) {
		for _, id := range v.ix.cores[c].cpus {
			switch {
			case !v.usable.has(id):
			case v.load[id] > 0:
				stacked = append(stacked, id)
			case v.coreLoad[c] > 0:
				side = append(side, id)
			case v.whole[c]:
				whole = append(whole, id)
			default:
				frag = append(frag, id)
			}
		}
	}
	// Stable: equal loads keep packing order.
	slices.SortStableFunc(side, func(a, b int) int {
		return cmp.Compare(v.coreLoad[v.ix.cpuCore[a]], v.coreLoad[v.ix.cpuCore[b]])
	})
	slices.SortStableFunc(stacked, func(a, b int) int { return cmp.Compare(v.load[a], v.load[b]) })
	v.burstBuf = [4][]int{frag, whole, side, stacked}
	out := make([]int, 0, v.n)
	for _, tier := range v.burstBuf {
		out = append(out, tier[:min(len(tier), v.n-len(out))]...)
	}
	return out, nil
}

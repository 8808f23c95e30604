package cpuset

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
// whose burst load leaves room for this pod's share. Capacity is usable
// CPUs; a domain's tier is how many CPUs it must take from whole free cores
// (requested minus its fragments), so a node whose fragments suffice beats an
// L3 group that would break a whole core.
func (v *view) staticBurst() ([]int, error) {
	for c, f := range v.free {
		v.cap.core[c], v.aux.core[c] = f, 0
		if !v.whole[c] {
			v.aux.core[c] = f
		}
	}
	v.ix.sum(v.cap)
	v.ix.sum(v.aux)
	d, ok := v.search(func(d domain) (bool, grade) {
		return v.cap.of(d) >= v.n, grade{tier: max(0, v.n-v.aux.of(d))}
	})
	if !ok {
		return nil, shortf("%s: not enough CPUs with room for %d millicores each: requested=%d, available=%d",
			StaticBurst, v.share, v.n, v.usableTotal())
	}
	// Order: shared CPUs, fullest first; then left-overs; then whole cores one
	// core at a time (both siblings before the next core, so as few whole
	// cores as possible are broken); within a tier by packing order, then id.
	shared, leftover, whole := v.burstBuf[0][:0], v.burstBuf[1][:0], v.burstBuf[2][:0]
	for _, c := range v.coreOrder(d, v.cap, v.n, byID) {
		for _, id := range v.ix.cores[c].cpus {
			switch {
			case !v.usable.has(id):
			case v.load[id] > 0:
				shared = append(shared, id)
			case !v.whole[c]:
				leftover = append(leftover, id)
			default:
				whole = append(whole, id)
			}
		}
	}
	// Stable: equal loads keep packing order.
	slices.SortStableFunc(shared, func(a, b int) int { return cmp.Compare(v.load[b], v.load[a]) })
	v.burstBuf = [3][]int{shared, leftover, whole}
	out := make([]int, 0, v.n)
	for _, tier := range v.burstBuf {
		out = append(out, tier[:min(len(tier), v.n-len(out))]...)
	}
	return out, nil
}

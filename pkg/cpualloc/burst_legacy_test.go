package cpualloc

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The static-burst placement before the policy avoided stacking replicas: it
// filled CPUs that already carried burst load first, the most loaded first,
// so replicas of one Deployment landed on the same CPUs. It is kept here, in
// a test file, only so that TestStaticBurstReplicas measures the two in the
// same run.

// legacyStaticBurst allocates as the old policy did.
func legacyStaticBurst(a *Allocator, st State, reserved cpuset.CPUSet, req Request) (Result, error) {
	req, err := req.normalised()
	if err != nil {
		return Result{}, err
	}
	v, err := a.ix.newView(occupancy{bits: st.Exclusive.w, burst: st.BurstMilli}, reserved, req)
	if err != nil {
		return Result{}, err
	}
	defer a.ix.views.Put(v)
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
		return Result{}, shortf("legacy static-burst: no room")
	}
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
	slices.SortStableFunc(shared, func(a, b int) int { return cmp.Compare(v.load[b], v.load[a]) })
	v.burstBuf[0], v.burstBuf[1], v.burstBuf[2] = shared, leftover, whole
	out := make([]int, 0, v.n)
	for _, tier := range [][]int{shared, leftover, whole} {
		out = append(out, tier[:min(len(tier), v.n-len(out))]...)
	}
	return a.ix.result(out, StaticBurst), nil
}

// BenchmarkStaticBurstNPS4Busy70 times the static-burst decision and the
// legacy one on the same states and requests, in the same run.
func BenchmarkStaticBurstNPS4Busy70(b *testing.B) {
	topo := fixture.MustBuild(fixture.AMDNPS4)
	a, err := NewAllocator(topo)
	if err != nil {
		b.Fatal(err)
	}
	// 70 % taken exclusively, and a quarter CPU of burst load on every
	// fourth free CPU: replicas placed before.
	states := busyStates(topo, 64)
	for i, st := range states {
		st.BurstMilli = map[int]int64{}
		for _, c := range topo.CPUs {
			if !st.Exclusive.Contains(c.ID) && (c.ID+i)%4 == 0 {
				st.BurstMilli[c.ID] = 250
			}
		}
		states[i] = st
	}
	for _, c := range []struct {
		name  string
		alloc func(State, Request) (Result, error)
	}{
		{"current", func(st State, r Request) (Result, error) { return a.Allocate(st, cpuset.New(), r) }},
		{"legacy", func(st State, r Request) (Result, error) { return legacyStaticBurst(a, st, cpuset.New(), r) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			i := 0
			for b.Loop() {
				req := Request{CPUs: 1 + i%8, Policy: StaticBurst, RequestMilli: 1000}
				start := time.Now()
				if _, err := c.alloc(states[i%len(states)], req); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				i++
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns")
		})
	}
}

package cpualloc

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// busyStates returns n states of topo with about 70 % of the CPUs exclusively
// taken, as seeded random whole cores and single threads.
func busyStates(topo *topology.Topology, n int) []State {
	r := rand.New(rand.NewPCG(70, 256))
	cores := coresOf(topo)
	ids := make([]int, 0, len(cores))
	for id := range cores {
		ids = append(ids, id)
	}
	slices.Sort(ids) // the same states on every run: maps iterate at random
	out := make([]State, n)
	for i := range out {
		var taken []int
		for _, core := range ids {
			cpus := cores[core]
			switch p := r.Float64(); {
			case p < 0.6:
				taken = append(taken, cpus...)
			case p < 0.8:
				taken = append(taken, cpus[r.IntN(len(cpus))])
			}
		}
		out[i] = State{Exclusive: NewBits(taken...)}
	}
	return out
}

// BenchmarkAllocateNPS4Busy70 times one decision on the 256-CPU NPS4 machine
// with 70 % of its CPUs taken, for requests of 1-16 CPUs. full-pcpus gets the
// even counts of 2-16 (odd counts are rejected up front and would flatter it);
// the default gets every count, so its odd ones time full-pcpus-then-threads.
func BenchmarkAllocateNPS4Busy70(b *testing.B) { benchmarkBusy70(b, fixture.AMDNPS4) }

// BenchmarkAllocateLarge1024Busy70 is the same on the 1024-CPU machine (2
// sockets, 16 NUMA nodes, 32 L3 groups).
func BenchmarkAllocateLarge1024Busy70(b *testing.B) { benchmarkBusy70(b, fixture.Large1024) }

func benchmarkBusy70(b *testing.B, shape fixture.Shape) {
	topo := fixture.MustBuild(shape)
	states := busyStates(topo, 64)
	allocate := func(st int, req Request) (Result, error) {
		return Allocate(topo, states[st], cpuset.New(), req)
	}
	busy70(b, allocate, len(states))
}

// busy70 times allocate over the states, per policy, for the requests the
// Busy70 benchmarks describe.
func busy70(b *testing.B, allocate func(state int, req Request) (Result, error), states int) {
	for _, p := range []Policy{FullPCPUs, SpreadByPCPUs, DistributeAcrossNUMA, StaticBurst, ""} {
		b.Run(cmp.Or(string(p), "default"), func(b *testing.B) {
			if _, err := allocate(0, Request{CPUs: 2, Policy: p}); err != nil {
				b.Fatal(err)
			}
			var took []time.Duration
			i := 0
			for b.Loop() {
				n := 1 + i%16
				switch p {
				case FullPCPUs:
					n = 2 + 2*(i%8)
				case StaticBurst:
					// It stays in one node: at 70 % taken some nodes of these
					// states hold no more than 8.
					n = 1 + i%8
				}
				start := time.Now()
				if _, err := allocate(i%states, Request{CPUs: n, Policy: p}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				i++
			}
			// The mean hides how a typical decision fares on a busy host; the
			// median is the figure the target is set on.
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns")
		})
	}
}

// BenchmarkAllocateMemory times one decision on the two-socket Intel2S96C
// machine with 70 % of its CPUs taken, without memory and with memory
// accounted: 4 GiB that any node holds, and 500 GiB that only both nodes
// together hold (the spill). The first is the scheduler's path and must
// cost what it did before memory was a dimension.
func BenchmarkAllocateMemory(b *testing.B) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	states := busyStates(topo, 64)
	free := Capacity(topo, Memory{Bytes: 8 * gib})
	for _, c := range []struct {
		name string
		free map[int]Memory
		mem  Memory
	}{
		{"none", nil, Memory{}},
		{"fits-one-node", free, Memory{Bytes: 4 * gib}},
		{"spills", free, Memory{Bytes: 500 * gib}},
	} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				st := states[i%len(states)]
				st.Free = c.free
				if _, err := Allocate(topo, st, cpuset.New(), Request{CPUs: 1 + i%8, Memory: c.mem}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

package scenario

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"

	"github.com/locus-project/locus/bench/kubelet"
)

// busyTaken returns n sets of about 70 % of topo's CPUs, seeded random whole
// cores (60 % of cores) and single threads (20 %): the same recipe as the
// allocator's own NPS4 benchmark, so its figures and these line up.
func busyTaken(topo *topology.Topology, n int) []cpuset.CPUSet {
	r := rand.New(rand.NewPCG(70, 256))
	cores := map[int][]int{}
	var ids []int
	for _, c := range topo.CPUs {
		if len(cores[c.Core]) == 0 {
			ids = append(ids, c.Core)
		}
		cores[c.Core] = append(cores[c.Core], c.ID)
	}
	out := make([]cpuset.CPUSet, n)
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
		out[i] = cpuset.New(taken...)
	}
	return out
}

// timed runs decide once per benchmark iteration on request sizes sizes[i%len]
// and reports the median decision time; the mean (ns/op) also counts the undo
// that restores kubelet's mutable state.
func timed(b *testing.B, sizes []int, decide func(i, n int) (undo func())) {
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		undo := decide(i, sizes[i%len(sizes)])
		took = append(took, time.Since(start))
		undo()
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns")
}

var (
	anySize  = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	evenSize = []int{2, 4, 6, 8, 10, 12, 14, 16}
)

// BenchmarkNPS4Busy70 times one decision on the 256-CPU NPS4 machine with
// 70 % of its CPUs taken, Locus and kubelet on the same states and requests.
// Pairs: Locus full-pcpus and kubelet full-pcpus-only on even sizes; Locus
// spread-by-pcpus and kubelet's default static policy on 1-16 CPUs.
func BenchmarkNPS4Busy70(b *testing.B) { benchmarkBusy70(b, fixture.AMDNPS4) }

// BenchmarkLarge1024Busy70 is the same on the 1024-CPU machine (2 sockets,
// 16 NUMA nodes, 32 L3 groups).
func BenchmarkLarge1024Busy70(b *testing.B) { benchmarkBusy70(b, fixture.Large1024) }

func benchmarkBusy70(b *testing.B, shape fixture.Shape) {
	topo := fixture.MustBuild(shape)
	taken := busyTaken(topo, 64)
	for _, tc := range []struct {
		policy cpualloc.Policy
		sizes  []int
	}{{cpualloc.FullPCPUs, evenSize}, {cpualloc.SpreadByPCPUs, anySize}} {
		b.Run("locus "+string(tc.policy), func(b *testing.B) {
			alloc, err := cpualloc.NewAllocator(topo)
			if err != nil {
				b.Fatal(err)
			}
			// Each node's state made beforehand, as kubelet's below are:
			// both decide on the occupancy they keep.
			states := make([]cpualloc.State, len(taken))
			for i, t := range taken {
				states[i] = cpualloc.State{Exclusive: cpualloc.BitsOf(t)}
			}
			timed(b, tc.sizes, func(i, n int) func() {
				if _, err := alloc.Allocate(states[i%len(states)], cpuset.New(), cpualloc.Request{CPUs: n, Policy: tc.policy}); err != nil {
					b.Fatal(err)
				}
				return func() {}
			})
		})
	}
	for _, tc := range []struct {
		cfg   kubelet.Config
		sizes []int
	}{
		{kubelet.Config{FullPCPUsOnly: true}, evenSize},
		{kubelet.Config{}, anySize},
		{kubelet.Config{TopologyManager: kubelet.TopologyBestEffort}, anySize},
	} {
		if tc.cfg.TopologyManager != "" && len(topo.Nodes) > 8 {
			// kubelet refuses a topology manager policy on more than 8 NUMA
			// nodes (its hint merge enumerates every node subset).
			continue
		}
		nodes := make([]*kubelet.Static, len(taken))
		for i := range nodes {
			s, err := kubelet.New(topo, tc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Occupy(taken[i]); err != nil {
				b.Fatal(err)
			}
			nodes[i] = s
		}
		b.Run(nodes[0].Name(), func(b *testing.B) {
			timed(b, tc.sizes, func(i, n int) func() {
				s := nodes[i%len(nodes)]
				if _, err := s.Allocate(i, n); err != nil {
					b.Fatal(err)
				}
				return func() {
					if err := s.Release(i); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

package core

import (
	"fmt"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// BenchmarkSweepChangedView is what the scale run's sweep pays for one
// node whose view changed (a pod assumed on it): each of the run's
// sixteen request kinds (1-16 CPUs under the default policy, 256Mi of
// memory each) answered again on the new view, as the sixteen tables do
// when their kind is next asked. The node is a 192-CPU two-socket
// machine with memory in its report, a quarter of its cores held.
func BenchmarkSweepChangedView(b *testing.B) {
	const nodes = 64
	shape := fixture.Intel2S96C
	c := NewCluster()
	for i := range nodes {
		name := fmt.Sprintf("n%d", i)
		held := map[string]workload.Assignment{}
		for k := range 12 { // 12 pods of 2 cores: 48 CPUs
			core := (i + k*4) % shape.TotalCores()
			ids := []int{core, core + shape.TotalCores(), (core + 1) % shape.TotalCores(), (core+1)%shape.TotalCores() + shape.TotalCores()}
			held[fmt.Sprintf("ns/p%d-%d", i, k)] = workload.Assignment{CPUs: cpuset.New(ids...), Policy: cpualloc.FullPCPUs}
		}
		c.SetNRT(name, publishMem(b, shape, name, held, nil))
	}
	var kinds []Request
	for cpus := 1; cpus <= 16; cpus++ {
		r := req(cpus, "", int64(cpus)*1000)
		r.Memory = cpualloc.Memory{Bytes: 256 << 20}
		kinds = append(kinds, r)
	}
	churn := &workload.Assignment{CPUs: cpuset.New(60, 60+shape.TotalCores()), Policy: cpualloc.FullPCPUs}
	var w Sweeper
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// A pod with a decision moves to the next node: its old node's
		// view and its new one change.
		c.SetPod("ns/churn", fmt.Sprintf("n%d", i%nodes), churn)
		snap := c.Snapshot()
		for _, r := range kinds {
			if _, fits := w.Sweep(snap, r).Score(0); !fits {
				b.Fatal("n0 does not fit")
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*len(kinds)), "ns/placement")
}

package core

import (
	"fmt"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// BenchmarkCycle is the core's share of one scheduling cycle on a cluster
// of 1000 two-socket 96-core nodes, each with a third of its cores held:
// one pod changed since the last cycle (a new snapshot, two views rebuilt),
// then a 4-CPU placement tried on every node, as Filter would.
func BenchmarkCycle(b *testing.B) {
	const nodes = 1000
	c := NewCluster()
	shape := fixture.Intel2S96C
	for i := range nodes {
		name := fmt.Sprintf("n%d", i)
		held := map[string]workload.Assignment{}
		for k := range 16 { // 16 pods of 2 cores: 64 CPUs
			core := (i + k*3) % shape.TotalCores()
			ids := []int{core, core + shape.TotalCores(), (core + 1) % shape.TotalCores(), (core+1)%shape.TotalCores() + shape.TotalCores()}
			held[fmt.Sprintf("ns/p%d-%d", i, k)] = workload.Assignment{CPUs: cpuset.New(ids...), Policy: cpualloc.FullPCPUs}
			c.SetPod(fmt.Sprintf("ns/p%d-%d", i, k), name, nil)
		}
		o := publish(b, shape, name, cpuset.New(0, shape.TotalCores()), held)
		c.SetNRT(name, o)
	}
	r := req(4, "", 0)
	// A pod with a decision moving from node to node: each cycle two views
	// are rebuilt (a pod without one changes no view).
	churn := &workload.Assignment{CPUs: cpuset.New(50, 50+shape.TotalCores()), Policy: cpualloc.FullPCPUs}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.SetPod("ns/churn", fmt.Sprintf("n%d", i%nodes), churn)
		snap := c.Snapshot()
		fit := 0
		for _, v := range snap.All() {
			if _, err := Place(v, 0, r); err == nil {
				fit++
			}
		}
		if fit != nodes {
			b.Fatalf("%d of %d nodes fit", fit, nodes)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nodes, "ns/node")
}

// BenchmarkCyclePacked is a cycle of the scale run's kind: 1000 nodes
// whose CPUs are held by the decisions of bound pods (no report lists
// them), each node three quarters full with 18 pods of 8 CPUs. Each
// cycle a pod leaves one node and another is placed there, assumed and
// bound; the snapshot then has that node's view anew, and a 4-CPU
// request is tried on every node, as Filter would.
func BenchmarkCyclePacked(b *testing.B) {
	const nodes, pods = 1000, 18
	c := NewCluster()
	shape := fixture.Intel2S96C
	cores := shape.TotalCores()
	names := make([]string, nodes)
	for i := range nodes {
		names[i] = fmt.Sprintf("n%d", i)
		c.SetNRT(names[i], publish(b, shape, names[i], cpuset.New(0, cores), nil))
		for k := range pods {
			var ids []int
			for core := 1 + 4*k; core < 5+4*k; core++ {
				ids = append(ids, core, core+cores)
			}
			d := &workload.Assignment{CPUs: cpuset.New(ids...), Policy: cpualloc.FullPCPUs}
			c.SetPod(fmt.Sprintf("ns/p%d-%d", i, k), names[i], d)
		}
	}
	r := req(4, cpualloc.FullPCPUs, 0)
	last := make([]string, nodes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		j := i % nodes
		if last[j] != "" {
			c.DeletePod(last[j])
		}
		snap := c.Snapshot()
		fit := 0
		for _, v := range snap.All() {
			if Fits(v, 0, r) == nil {
				fit++
			}
		}
		if fit != nodes {
			b.Fatalf("%d of %d nodes fit", fit, nodes)
		}
		v := snap.Get(names[j])
		p, err := Place(v, 0, r)
		if err != nil {
			b.Fatal(err)
		}
		key := fmt.Sprintf("ns/c%d", i)
		if p, err = c.Assume(key, names[j], v, p, r); err != nil {
			b.Fatal(err)
		}
		c.SetPod(key, names[j], &workload.Assignment{CPUs: p.Result.CPUs, Policy: p.Result.Policy})
		last[j] = key
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nodes, "ns/node")
}

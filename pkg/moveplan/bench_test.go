package moveplan

import (
	"fmt"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// BenchmarkPlanIntel2S96C20 times one plan on the 2-socket 48-core machine
// (192 CPUs, 2 nodes) with 20 movable workloads of 6-10 CPUs spread evenly
// over both nodes (84 CPUs held on each, 12 free), for a request of 24 CPUs
// on one node: it needs moves.
func BenchmarkPlanIntel2S96C20(b *testing.B) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	var in Input
	var st cpualloc.State
	for i := range 20 {
		req := cpualloc.Request{CPUs: []int{6, 8, 10, 8, 10}[i%5], NUMAStrategy: cpualloc.LeastAllocated}
		res, err := cpualloc.Allocate(topo, st, cpuset.New(), req)
		if err != nil {
			b.Fatal(err)
		}
		st = st.With(res, req)
		in.Holdings = append(in.Holdings, Holding{Name: fmt.Sprintf("w%d", i), CPUs: res.CPUs, Movable: true,
			Resident: map[int]uint64{res.NUMANodes[0]: uint64(1+i%3) * gib}})
	}
	in.Request = cpualloc.Request{CPUs: 24}
	plan, err := Make(topo, in)
	if err != nil || len(plan.Moves) == 0 || plan.Bounded {
		b.Fatalf("want a plan with moves, unbounded: %+v, %v", plan, err)
	}
	b.ReportMetric(float64(plan.Cost.CPUs), "cpus-moved")
	b.ResetTimer()
	for b.Loop() {
		if _, err := Make(topo, in); err != nil {
			b.Fatal(err)
		}
	}
}

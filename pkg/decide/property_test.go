package decide

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// randomInput is a node of random workloads: some exclusive (any policy,
// static-burst ones with a request), some shared, some BE, some with a
// container cgroup below the workload's own.
func randomInput(r *rand.Rand) Input {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	policies := []cpualloc.Policy{"", cpualloc.FullPCPUs, cpualloc.FullPCPUsThenThreads, cpualloc.SpreadByPCPUs,
		cpualloc.DistributeAcrossNUMA, cpualloc.StaticBurst}
	in := Input{Topology: topo, Reserved: cpuset.New(0, 96), BEPool: cpuset.New()}
	for i := range 1 + r.IntN(24) {
		w := testWorkload(fmt.Sprintf("w%02d", i), 0, false, r.IntN(4) == 0, nil)
		if r.IntN(2) == 0 {
			w.Containers = append(w.Containers, workload.Container{Name: "c", Cgroup: w.Cgroup + "/c"})
		}
		if !w.BE && r.IntN(2) == 0 {
			p := policies[r.IntN(len(policies))]
			w.CPU = workload.CPUNeed{Exclusive: true, CPUs: 1 + r.IntN(12), Policy: p}
			if p == cpualloc.StaticBurst {
				w.CPU.RequestMilli = int64(100 + r.IntN(2000))
			}
		}
		in.Workloads = append(in.Workloads, w)
	}
	return in
}

// TestComputeProperties: deciding again on the decision's own assignments
// changes nothing; no CPU belongs to two owners unless both share it by
// static-burst; and every file written or restored is in the cgroup of the
// workload it is for, or below it.
func TestComputeProperties(t *testing.T) {
	for seed := range uint64(150) {
		in := randomInput(rand.New(rand.NewPCG(seed, 0x1d)))
		d := Compute(in)

		again := in
		again.Previous = d.Assignments
		d2 := Compute(again)
		if !reflect.DeepEqual(d.Assignments, d2.Assignments) || !reflect.DeepEqual(d.Ops, d2.Ops) || !reflect.DeepEqual(d.Restores, d2.Restores) {
			t.Fatalf("seed %d: deciding twice differs:\nfirst  %v\nsecond %v", seed, d.Assignments, d2.Assignments)
		}

		owner := map[int]string{}
		for name, a := range d.Assignments {
			for _, c := range a.CPUs.UnsortedList() {
				if prev, ok := owner[c]; ok && (a.Policy != cpualloc.StaticBurst || d.Assignments[prev].Policy != cpualloc.StaticBurst) {
					t.Fatalf("seed %d: CPU %d given to %s and %s", seed, c, prev, name)
				}
				owner[c] = name
			}
		}

		inside := func(cg string) bool {
			for _, w := range in.Workloads {
				if cg == w.Cgroup || strings.HasPrefix(cg, w.Cgroup+"/") {
					return true
				}
			}
			return false
		}
		for _, op := range d.Ops {
			if !inside(op.Cgroup) {
				t.Fatalf("seed %d: writes %s of %q, no workload's cgroup", seed, op.Knob, op.Cgroup)
			}
		}
		for _, r := range d.Restores {
			if !inside(r.Cgroup) {
				t.Fatalf("seed %d: restores %q, no workload's cgroup", seed, r.Cgroup)
			}
		}
	}
}

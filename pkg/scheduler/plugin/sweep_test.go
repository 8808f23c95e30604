package plugin

import (
	"context"
	"testing"
	"time"

	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/workload"
)

// PreFilter says Skip exactly when Filter would pass every node of the
// framework's list, and Filter and Score, reading the cycle's sweep, give
// what the node's view gives asked directly: with every node fit, with
// one node's agent silent, one node full, one node without a report.
func TestSweepSameAsViews(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Now()
	const n = 70 // two chunks of a snapshot
	pl, kn, infos := listedEnv(ctx, t, machine, n, now)
	p := pod("p", nil)
	full := map[string]workload.Assignment{"ns/big": {CPUs: cpuset.New(1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15), Policy: cpualloc.FullPCPUs}}
	steps := []struct {
		what   string
		change func()
		skip   bool
	}{
		{"every node fits", func() {}, true},
		{"n0005's agent silent", func() {
			pl.Cluster().SetNRT(kn[5].Name, beating(t, machine, kn[5].Name, nil, now.Add(-time.Hour)))
		}, false},
		{"n0005 back", func() {
			pl.Cluster().SetNRT(kn[5].Name, beating(t, machine, kn[5].Name, nil, now))
		}, true},
		{"n0066 full", func() {
			pl.Cluster().SetPod("ns/big", kn[66].Name, nil)
			pl.Cluster().SetNRT(kn[66].Name, beating(t, machine, kn[66].Name, full, now))
		}, false},
		{"n0066 emptied, n0030 without a report", func() {
			pl.Cluster().DeletePod("ns/big")
			pl.Cluster().DeleteNRT(kn[30].Name)
		}, false},
		{"n0030 back", func() {
			pl.Cluster().SetNRT(kn[30].Name, beating(t, machine, kn[30].Name, nil, now))
		}, true},
	}
	for _, step := range steps {
		step.change()
		cs := framework.NewCycleState()
		_, st := pl.PreFilter(ctx, cs, p)
		if !st.IsSuccess() && !st.IsSkip() {
			t.Fatalf("%s: PreFilter %v", step.what, st)
		}
		s, _ := readState(cs)
		allFit := true
		for _, ni := range infos {
			v := s.snap.Get(ni.Node().Name)
			err := core.Fresh(v, s.now, DefaultNRTMaxAge)
			var score int64
			if err == nil {
				score, err = core.FitsScore(v, 0, s.req)
			}
			allFit = allFit && err == nil
			got := pl.Filter(ctx, cs, p, ni)
			if got.IsSuccess() != (err == nil) {
				t.Errorf("%s: Filter on %s: %v, the view says %v", step.what, ni.Node().Name, got, err)
				continue
			}
			if err != nil {
				if want := unfitStatus(ctx, p, ni.Node().Name, err, s.req); got.Code() != want.Code() || got.Message() != want.Message() {
					t.Errorf("%s: Filter on %s: %v, the view says %v", step.what, ni.Node().Name, got, want)
				}
				continue
			}
			if got, _ := pl.Score(ctx, cs, p, ni); got != score {
				t.Errorf("%s: Score on %s: %d, the view says %d", step.what, ni.Node().Name, got, score)
			}
		}
		if st.IsSkip() != allFit || allFit != step.skip {
			t.Errorf("%s: PreFilter says skip %t, every node fits %t, want %t", step.what, st.IsSkip(), allFit, step.skip)
		}
	}
	// A NodeInfo the list does not hold (preemption's copies) is answered
	// as its node.
	cs := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, cs, p); !st.IsSkip() {
		t.Fatalf("PreFilter: %v", st)
	}
	if st := pl.Filter(ctx, cs, p, infos[7].Snapshot()); !st.IsSuccess() {
		t.Errorf("Filter on a copy of %s: %v", kn[7].Name, st)
	}
	if st := pl.Filter(ctx, cs, p, node("elsewhere", "16")); st.IsSuccess() {
		t.Error("Filter passes a node without a report")
	}
}

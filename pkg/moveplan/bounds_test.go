package moveplan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// TestHostileStateIsBounded: a machine of 1,024 CPUs held by 1,000 movable
// one-CPU workloads, scattered so that every node needs many moves, is
// planned within the search's bounds, in bounded time, and says the bound
// was reached.
func TestHostileStateIsBounded(t *testing.T) {
	topo := fixture.MustBuild(fixture.Large1024)
	var in Input
	for i, c := range topo.CPUs {
		if i%43 == 0 || len(in.Holdings) >= 1000 {
			continue // a few free CPUs on every node
		}
		in.Holdings = append(in.Holdings, Holding{Name: fmt.Sprintf("w%d", i), CPUs: cpuset.New(c.ID), Movable: true})
	}
	for _, cpus := range []int{16, 32} {
		in.Request = cpualloc.Request{CPUs: cpus}
		start := time.Now()
		plan, err := Make(topo, in)
		took := time.Since(start)
		switch {
		case err == nil:
			if !plan.Bounded {
				t.Errorf("a plan over %d holdings claims to be proven cheapest", len(in.Holdings))
			}
			checkReplay(t, topo, in, plan)
		case !errors.Is(err, ErrNoMoves) || !strings.Contains(err.Error(), "within the search's bounds"):
			t.Errorf("%d CPUs: %v, want no moves within the bounds", cpus, err)
		}
		t.Logf("%d CPUs, %d holdings: %d moves, %v, in %v", cpus, len(in.Holdings), len(plan.Moves), err, took)
		if took > 20*time.Second {
			t.Fatalf("took %v", took)
		}
	}
}

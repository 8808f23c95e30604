package core

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// TestSweepMatchesViews runs random sequences of reports (some with
// heartbeats), pods, assumed allocations and node changes on 80 nodes
// (two chunks of a snapshot), and after every step asks a Sweeper for
// one of more requests than it keeps, in random order, then compares
// each slot's answer with a placement made on the slot's view directly
// (not through what the view remembers), and AllFresh with Fresh on
// every view. It fails when a changed view's answer is not found again,
// an unchanged one is lost, or the oldest heartbeat is wrong.
func TestSweepMatchesViews(t *testing.T) {
	seeds, steps := 40, 120
	if testing.Short() {
		seeds = 8
	}
	var nodes []string
	for i := range 80 {
		nodes = append(nodes, fmt.Sprintf("n%d", i))
	}
	var reqs []Request
	for cpus := 1; cpus <= sweepKeys/2+4; cpus++ {
		reqs = append(reqs, req(cpus, cpualloc.FullPCPUsThenThreads, 0))
		if cpus%3 == 0 {
			reqs = append(reqs, req(cpus, cpualloc.FullPCPUs, 0), req(cpus, cpualloc.StaticBurst, int64(cpus)*400))
		}
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const maxAge = 3 * time.Minute
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		c := NewCluster()
		for _, n := range nodes {
			c.SetNRT(n, publish(t, shapes[rng.IntN(len(shapes))], n, reservedCore, nil))
		}
		w := &Sweeper{}
		var log []string
		for step := range steps {
			if rng.IntN(4) == 0 {
				node := nodes[rng.IntN(len(nodes))]
				o := publish(t, shapes[0], node, reservedCore, nil)
				beat := base.Add(time.Duration(rng.IntN(600)) * time.Second)
				o.Metadata.Annotations[nrt.AnnotationHeartbeat] = beat.Format(time.RFC3339)
				c.SetNRT(node, o)
				log = append(log, fmt.Sprintf("SetNRT(%s, heartbeat %s)", node, beat.Format(time.RFC3339)))
			} else {
				log = append(log, randomStep(t, rng, c, nodes))
			}
			snap := c.Snapshot()
			r := reqs[rng.IntN(len(reqs))]
			sw := w.Sweep(snap, r)
			for slot := range snap.Slots() + 3 {
				got, fits := sw.Score(slot)
				var want int64
				var err error = &Unfit{}
				if v := snap.At(slot); v != nil {
					if err = usable(v, 0); err == nil {
						var p Placement
						p, err = v.allocate(r, false)
						want = p.Score
					}
				}
				if fits != (err == nil) || (fits && got != want) {
					t.Fatalf("seed %d step %d, %+v, slot %d: sweep says fits %t score %d, the view %v score %d\nsteps:\n%v",
						seed, step, r, slot, fits, got, err, want, log)
				}
			}
			now := base.Add(time.Duration(rng.IntN(900)) * time.Second)
			all := true
			for slot := range snap.Slots() {
				all = all && Fresh(snap.At(slot), now, maxAge) == nil
			}
			if got := sw.AllFresh(now, maxAge); got != all {
				t.Fatalf("seed %d step %d: AllFresh(%s) %t, every view %t\nsteps:\n%v", seed, step, now, got, all, log)
			}
		}
	}
}

// TestSweepUnremembered: a request a view does not remember (see
// memoKey) gets no Sweep, and nothing fits by it.
func TestSweepUnremembered(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n0", publish(t, twoNode, "n0", reservedCore, nil))
	r := Request{CPURequest: workload.CPURequest{CPUs: 2, Policy: "no-such-policy"}}
	sw := (&Sweeper{}).Sweep(c.Snapshot(), r)
	if sw != nil {
		t.Fatalf("Sweep of %+v: %v, want nil", r, sw)
	}
	if _, ok := sw.Score(0); ok || sw.AllFresh(time.Now(), 0) {
		t.Fatal("a nil Sweep says a node fits")
	}
}

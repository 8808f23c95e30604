package core

import (
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// publishMovable is publish with the pods named in movable counted as
// movable in each zone.
func publishMovable(t testing.TB, node string, held map[string]workload.Assignment, movable map[string]bool) *nrt.Object {
	t.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(twoNode), Assignments: held, Movable: movable})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// setNRT sets node's report and binds the pods it lists to it: the
// report's holdings count for pods that exist.
func setNRT(c *Cluster, node string, o *nrt.Object, held map[string]workload.Assignment) {
	c.SetNRT(node, o)
	for key := range held {
		c.SetPod(key, node, nil)
	}
}

// threads holds one thread of every core of twoNode's node 0 (m0) and of
// node 1 (m1): 8 CPUs are free, none of them a whole core.
var threads = map[string]workload.Assignment{
	"ns/m0": {CPUs: cpuset.New(0, 1, 2, 3), Policy: cpualloc.FullPCPUsThenThreads},
	"ns/m1": {CPUs: cpuset.New(4, 5, 6, 7), Policy: cpualloc.FullPCPUsThenThreads},
}

// TestFitsAfterMoves: a pod whose CPUs fit on one NUMA node only once
// movable pods leave it is placed there without CPUs (the agent's to
// choose), the node that needs the fewest moves; without movable CPUs, or
// with nowhere for them to go, it is refused as before.
func TestFitsAfterMoves(t *testing.T) {
	full := map[string]workload.Assignment{
		"ns/m0":   threads["ns/m0"],
		"ns/full": {CPUs: cpuset.New(4, 5, 6, 7, 12, 13, 14, 15), Policy: cpualloc.FullPCPUs},
	}
	for _, tc := range []struct {
		name    string
		held    map[string]workload.Assignment
		movable map[string]bool
		req     Request
		node    int // the NUMA node placed on after moves; -1: refused
	}{
		{"no movable CPUs: refused as today", threads, nil, req(4, cpualloc.FullPCPUs, 0), -1},
		{"movable pod on node 0: fits there", threads, map[string]bool{"ns/m0": true}, req(4, cpualloc.FullPCPUs, 0), 0},
		{"movable pod on node 1: fits there", threads, map[string]bool{"ns/m1": true}, req(6, cpualloc.FullPCPUs, 0), 1},
		{"both movable: the lowest node of those with most free", threads, map[string]bool{"ns/m0": true, "ns/m1": true}, req(8, cpualloc.FullPCPUs, 0), 0},
		{"more than a node has: refused", threads, map[string]bool{"ns/m0": true, "ns/m1": true}, req(10, cpualloc.FullPCPUs, 0), -1},
		{"nowhere for the movable pod to go: refused", full, map[string]bool{"ns/m0": true}, req(4, cpualloc.FullPCPUs, 0), -1},
		{"static-burst never waits for moves", threads, map[string]bool{"ns/m0": true}, req(10, cpualloc.StaticBurst, 9000), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster()
			setNRT(c, "n", publishMovable(t, "n", tc.held, tc.movable), tc.held)
			v := c.Snapshot().Get("n")
			if v.Err != nil {
				t.Fatal(v.Err)
			}
			p, err := Place(v, 16, tc.req)
			if tc.node < 0 {
				if err == nil || kind(err) != Insufficient {
					t.Fatalf("placed %+v, %v; want Insufficient", p, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !p.Moves || !p.Result.CPUs.IsEmpty() || len(p.Result.NUMANodes) != 1 || p.Result.NUMANodes[0] != tc.node {
				t.Fatalf("placement %+v; want after moves on NUMA node %d, no CPUs", p, tc.node)
			}
			if s, err := FitsScore(v, 16, tc.req); err != nil || s != p.Score {
				t.Fatalf("FitsScore %d, %v; want %d", s, err, p.Score)
			}
		})
	}
}

// TestScoreAfterMoves: a node where the pod fits only after moves scores
// below every node where it fits as it is, whatever the scoring strategy
// and however poorly the latter places it; between two nodes that need
// moves the strategy still chooses.
func TestScoreAfterMoves(t *testing.T) {
	c := NewCluster()
	movable := map[string]bool{"ns/m0": true}
	setNRT(c, "moves", publishMovable(t, "moves", threads, movable), threads)
	busier := map[string]workload.Assignment{"ns/m0b": threads["ns/m0"], "ns/m1b": threads["ns/m1"],
		"ns/x": {CPUs: cpuset.New(12, 13), Policy: cpualloc.FullPCPUsThenThreads}}
	setNRT(c, "moves-busier", publishMovable(t, "moves-busier", busier, map[string]bool{"ns/m0b": true}), busier)
	c.SetNRT("empty", publish(t, twoNode, "empty", cpuset.New(), nil))
	// "spread" fits 4 whole cores only over both NUMA nodes, without moves.
	spread := map[string]workload.Assignment{
		"ns/a": {CPUs: cpuset.New(0, 8, 1, 9, 2, 10), Policy: cpualloc.FullPCPUs},
		"ns/b": {CPUs: cpuset.New(4, 12, 5, 13, 6, 14), Policy: cpualloc.FullPCPUs},
	}
	setNRT(c, "spread", publish(t, twoNode, "spread", cpuset.New(), spread), spread)
	snap := c.Snapshot()
	for _, s := range []Scoring{MostAllocated, LeastAllocated} {
		r := req(4, cpualloc.FullPCPUs, 0)
		r.Scoring = s
		scores := map[string]Placement{}
		for _, n := range []string{"moves", "moves-busier", "empty", "spread"} {
			p, err := Place(snap.Get(n), 16, r)
			if err != nil {
				t.Fatalf("%s: %s refused: %v", s, n, err)
			}
			if p.Score < 0 || p.Score > MaxScore {
				t.Fatalf("%s: %s scores %d, outside [0, %d]", s, n, p.Score, MaxScore)
			}
			scores[n] = p
		}
		if !scores["moves"].Moves || !scores["moves-busier"].Moves || scores["empty"].Moves || scores["spread"].Moves {
			t.Fatalf("%s: placements %+v", s, scores)
		}
		if scores["spread"].Locality != SeveralNUMA {
			t.Fatalf("%s: spread placed %+v, want over both NUMA nodes", s, scores["spread"])
		}
		for _, with := range []string{"moves", "moves-busier"} {
			for _, without := range []string{"empty", "spread"} {
				if scores[with].Score >= scores[without].Score {
					t.Errorf("%s: %s (after moves) scores %d, not below %s's %d", s, with, scores[with].Score, without, scores[without].Score)
				}
			}
		}
		prefersBusier := scores["moves-busier"].Score > scores["moves"].Score
		if prefersBusier != (s == MostAllocated) || scores["moves-busier"].Score == scores["moves"].Score {
			t.Errorf("%s: after moves, busier node %d, other %d: the strategy does not choose", s, scores["moves-busier"].Score, scores["moves"].Score)
		}
	}
}

// TestMovableCountIsBounded: a report counting more movable CPUs than a
// zone has, or what is not a count, is unreadable, and the error names
// the zone and the value.
func TestMovableCountIsBounded(t *testing.T) {
	for _, value := range []string{"9", "-1", "many", strings.Repeat("9", 4096)} {
		o := publish(t, twoNode, "n", cpuset.New(), nil)
		o.Zones[1].Attributes = append(o.Zones[1].Attributes, nrt.Attribute{Name: nrt.AttributeMovableCPUs, Value: value})
		c := NewCluster()
		c.SetNRT("n", o)
		v := c.Snapshot().Get("n")
		if v.Err == nil || v.Err.Kind != BadTopology {
			t.Fatalf("%.20q: view %+v, want BadTopology", value, v.Err)
		}
		if msg := v.Err.Error(); !strings.Contains(msg, `"node-1"`) || !strings.Contains(msg, nrt.AttributeMovableCPUs) || len(msg) > 1000 {
			t.Errorf("%.20q: error %q, want the zone and the attribute, bounded", value, msg)
		}
	}
}

// A report with more movable CPUs frees the node for pods waiting for
// room; one with fewer does not.
func TestMoreMovableFrees(t *testing.T) {
	c := NewCluster()
	setNRT(c, "n", publishMovable(t, "n", threads, nil), threads)
	if !c.SetNRT("n", publishMovable(t, "n", threads, map[string]bool{"ns/m0": true})) {
		t.Fatal("m0 became movable: the node was not said to have more room")
	}
	if c.SetNRT("n", publishMovable(t, "n", threads, nil)) {
		t.Fatal("m0 no longer movable: the node was said to have more room")
	}
}

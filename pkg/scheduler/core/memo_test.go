package core

import (
	"fmt"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// A view remembers its placements: Place, Fits and ScoreOf agree with a
// fresh allocation for every request, also once the memo has wrapped
// round, and a request that did not fit keeps saying why.
func TestMemoAgreesWithAllocation(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	mustPlace(t, c, "ns/a", "n1", req(6, "", 0)) // 8 CPUs left
	v := c.Snapshot().Get("n1")
	var reqs []Request
	for cpus := 1; cpus <= 10; cpus++ {
		reqs = append(reqs, req(cpus, "", 0), req(cpus, cpualloc.SpreadByPCPUs, 0), req(cpus, cpualloc.StaticBurst, int64(cpus)*100))
	}
	for round := range 2 { // 30 requests: the 16-slot memo wraps
		for _, r := range reqs {
			want, wantErr := v.allocate(r, false)
			got, err := Place(v, 16, r)
			what := fmt.Sprintf("round %d, %d CPUs %s %dm", round, r.CPUs, r.Policy, r.RequestMilli)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s: Place error %v, want %v", what, err, wantErr)
			}
			if fitErr := Fits(v, 16, r); fmt.Sprint(fitErr) != fmt.Sprint(wantErr) {
				t.Fatalf("%s: Fits %v, want %v", what, fitErr, wantErr)
			}
			if wantErr != nil {
				continue
			}
			if !got.Result.CPUs.Equals(want.Result.CPUs) || got.Score != want.Score || got.Locality != want.Locality {
				t.Fatalf("%s: remembered %+v, allocated %+v", what, got, want)
			}
			if s, err := ScoreOf(v, r); err != nil || s != want.Score {
				t.Fatalf("%s: ScoreOf %d %v, want %d", what, s, err, want.Score)
			}
		}
	}
	// The node check comes before the memo.
	if err := Fits(v, 32, req(2, "", 0)); kind(err) != Stale {
		t.Fatalf("Fits with another capacity: %v", err)
	}
}

// Requests that differ in anything a placement depends on have different
// keys; values that do not fit a key are not remembered.
func TestMemoKeys(t *testing.T) {
	base := req(4, "", 0)
	variants := []Request{base, req(5, "", 0), req(4, cpualloc.FullPCPUs, 0), req(4, cpualloc.StaticBurst, 1000),
		req(4, cpualloc.StaticBurst, 2000), req(4, cpualloc.SpreadByPCPUs, 0), req(4, cpualloc.DistributeAcrossNUMA, 0)}
	withNUMA, withScoring := base, base
	withNUMA.NUMAStrategy = cpualloc.LeastAllocated
	withScoring.Scoring = LeastAllocated
	variants = append(variants, withNUMA, withScoring)
	seen := map[uint64]int{}
	for i, r := range variants {
		k, ok := r.memoKey()
		if !ok || k == 0 {
			t.Fatalf("variant %d (%+v): key %x %v", i, r, k, ok)
		}
		if j, dup := seen[k]; dup {
			t.Fatalf("variants %d and %d share key %x", j, i, k)
		}
		seen[k] = i
	}
	odd := base
	odd.Policy = "something-new"
	huge := req(4, cpualloc.StaticBurst, 1<<41)
	for _, r := range []Request{odd, huge, req(1<<16, "", 0)} {
		if _, ok := r.memoKey(); ok {
			t.Errorf("%+v has a key", r)
		}
	}
}

// The node's capacity, as SetNodeCPUs records it, makes a view of a
// report from another machine Stale without Place being told; a matching
// capacity makes it usable again, which frees CPUs for waiting pods.
func TestNodeCPUsMakeStaleViews(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	if c.SetNodeCPUs("n1", 32) {
		t.Error("a mismatching capacity freed something")
	}
	if err := Fits(c.Snapshot().Get("n1"), 0, req(2, "", 0)); kind(err) != Stale {
		t.Fatalf("with capacity 32: %v, want Stale", err)
	}
	if !c.SetNodeCPUs("n1", 16) {
		t.Error("a matching capacity freed nothing")
	}
	if c.SetNodeCPUs("n1", 16) {
		t.Error("the same capacity again freed something")
	}
	if err := Fits(c.Snapshot().Get("n1"), 0, req(2, "", 0)); err != nil {
		t.Fatalf("with capacity 16: %v", err)
	}
	c.SetNodeCPUs("n1", 32)
	c.DeleteNode("n1") // forgets the capacity; the report is still there
	if err := Fits(c.Snapshot().Get("n1"), 0, req(2, "", 0)); err != nil {
		t.Fatalf("after the node was deleted: %v", err)
	}
}

// Empty nodes of one machine with the same reserved CPUs share their
// placements; a node that holds something, or reserves other CPUs, has
// its own.
func TestEmptyNodesShareMemo(t *testing.T) {
	c := NewCluster()
	for _, node := range []string{"a", "b"} {
		c.SetNRT(node, publish(t, twoNode, node, reservedCore, nil))
	}
	c.SetNRT("other", publish(t, twoNode, "other", cpuset.New(7, 15), nil))
	snap := c.Snapshot()
	if snap.Get("a").memo != snap.Get("b").memo {
		t.Error("two empty nodes of one machine do not share their placements")
	}
	if snap.Get("other").memo == snap.Get("a").memo {
		t.Error("nodes reserving other CPUs share their placements")
	}
	r := req(4, "", 0)
	onB := mustPlace(t, c, "ns/x", "b", r) // b is no longer empty
	snap = c.Snapshot()
	if snap.Get("b").memo == snap.Get("a").memo {
		t.Fatal("a node holding CPUs shares the empty nodes' placements")
	}
	next, err := Place(snap.Get("b"), 0, r)
	if err != nil || !next.Result.CPUs.Intersection(onB.Result.CPUs).IsEmpty() {
		t.Fatalf("next pod on b: %v %v, overlapping %s", next.Result.CPUs, err, onB.Result.CPUs)
	}
	if onA, err := Place(snap.Get("a"), 0, r); err != nil || !onA.Result.CPUs.Equals(onB.Result.CPUs) {
		t.Fatalf("on empty a: %v %v, want what empty b gave: %s", onA.Result.CPUs, err, onB.Result.CPUs)
	}
}

// The memo keeps scores, not placements: Place after Fits places the
// request again, the same as a fresh allocation, without a second slot for
// it; a request that does not fit keeps its reason without a placement.
func TestMemoPlacesAgain(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	mustPlace(t, c, "ns/a", "n1", req(6, "", 0))
	v := c.Snapshot().Get("n1")
	for _, r := range []Request{req(2, "", 0), req(3, cpualloc.SpreadByPCPUs, 0), req(12, "", 0)} {
		want, wantErr := v.allocate(r, false)
		if _, err := FitsScore(v, 16, r); fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%d CPUs: FitsScore %v, want %v", r.CPUs, err, wantErr)
		}
		for range 2 {
			got, err := Place(v, 16, r)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%d CPUs: Place %v, want %v", r.CPUs, err, wantErr)
			}
			if !got.Result.CPUs.Equals(want.Result.CPUs) || got.Score != want.Score {
				t.Fatalf("%d CPUs: placed again %+v, allocated %+v", r.CPUs, got, want)
			}
		}
		key, _ := r.memoKey()
		n := 0
		for _, k := range v.memo.keys {
			if k == key {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d CPUs: the memo holds the request %d times, want once", r.CPUs, n)
		}
	}
}

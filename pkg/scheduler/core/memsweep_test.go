package core

import (
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// Requests that differ only in memory are answered apart, on every node
// of a snapshot at once (Sweep) as on one view: the answer for 1Gi is
// not the one for 20Gi.
func TestSweepMemoryApart(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n", publishMem(t, memNode, "n", nil, nil))
	snap := c.Snapshot()
	var w Sweeper
	slot := snap.Slot("n")
	for _, tc := range []struct {
		m    cpualloc.Memory
		fits bool
	}{{cpualloc.Memory{Bytes: gib}, true}, {cpualloc.Memory{Bytes: 20 * gib}, false}, {cpualloc.Memory{}, true}, {cpualloc.Memory{Bytes: 20 * gib}, false}} {
		if _, fits := w.Sweep(snap, memReq(2, tc.m)).Score(slot); fits != tc.fits {
			t.Errorf("%+v: sweep fits %v, want %v", tc.m, fits, tc.fits)
		}
		if err := Fits(snap.Get("n"), 0, memReq(2, tc.m)); (err == nil) != tc.fits {
			t.Errorf("%+v: Fits = %v", tc.m, err)
		}
	}
}

// A report that frees memory says so, as one that frees CPUs does: pods
// waiting for memory are tried again.
func TestReportFreeingMemory(t *testing.T) {
	held := map[string]workload.Assignment{"ns/a": {CPUs: cpuset.New(1, 9), Policy: cpualloc.FullPCPUs}}
	c := NewCluster()
	c.SetNRT("n", publishMem(t, memNode, "n", held, map[string]cpualloc.Memory{"ns/a": {Bytes: 6 * gib}}))
	if c.SetNRT("n", publishMem(t, memNode, "n", held, map[string]cpualloc.Memory{"ns/a": {Bytes: 7 * gib}})) {
		t.Error("less memory free: freed")
	}
	if !c.SetNRT("n", publishMem(t, memNode, "n", held, map[string]cpualloc.Memory{"ns/a": {Bytes: 2 * gib}})) {
		t.Error("more memory free, the same CPUs: not freed")
	}
}

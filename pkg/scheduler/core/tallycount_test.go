package core

import (
	"fmt"
	"testing"
	"unsafe"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// A CPU claimed by more decisions than a byte counts stays held until
// the last of them goes: the count past the byte is kept beside it.
func TestTallyCountsPastAByte(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n0", publish(t, twoNode, "n0", reservedCore, nil))
	n := exclOver + 45
	for i := range n {
		c.SetPod(fmt.Sprintf("ns/p%d", i), "n0", &workload.Assignment{CPUs: cpuset.New(3), Policy: cpualloc.FullPCPUs})
	}
	free := func() int64 { return c.Snapshot().Get("n0").FreeMilli() }
	all := int64(len(fixture.MustBuild(twoNode).CPUs)-reservedCore.Size()) * 1000
	for i := range n {
		if got := free(); got != all-1000 {
			t.Fatalf("%d of %d claims on CPU 3 left: free %d millicores, want %d", n-i, n, got, all-1000)
		}
		if got := c.Snapshot().Get("n0").State().Exclusive.CPUSet(); !got.Equals(cpuset.New(3)) {
			t.Fatalf("%d of %d claims on CPU 3 left: exclusive %s, want 3", n-i, n, got)
		}
		c.DeletePod(fmt.Sprintf("ns/p%d", i))
	}
	if got := free(); got != all {
		t.Fatalf("every claim gone: free %d millicores, want %d", got, all)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// An empty node keeps no tally at all (TestEmptyNodesKeepNoTally).
	if tl := c.tallies["n0"]; tl != nil && len(tl.over) != 0 {
		t.Fatalf("every claim gone: tally %+v, want no count kept past a byte", tl)
	}
}

// A tally counts a CPU's holders in a byte, not in a word: the counts are
// most of a tally, one per CPU on every node.
func TestTallyCountsInAByte(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n0", publish(t, twoNode, "n0", reservedCore, nil))
	c.mu.Lock()
	defer c.mu.Unlock()
	tl := c.tallyOf("n0", c.reports["n0"])
	if got, cpus := uintptr(len(tl.excl))*unsafe.Sizeof(tl.excl[0]), len(fixture.MustBuild(twoNode).CPUs); got > uintptr(cpus) {
		t.Fatalf("the counts of a %d-CPU node take %d bytes, want at most one a CPU", cpus, got)
	}
	if tl.burst != nil || tl.over != nil {
		t.Fatalf("a node without static-burst pods or shared claims: burst %v, over %v, want neither made", tl.burst, tl.over)
	}
}

// Only nodes that hold something keep a tally: in a large cluster most
// hold nothing, and a tally kept for each was about 340 bytes a node. A
// node keeps one while a holding is there, and its view counts it; once
// the holding goes, the node is as free as before and keeps none.
func TestEmptyNodesKeepNoTally(t *testing.T) {
	c := NewCluster()
	const nodes = 50
	for i := range nodes {
		n := fmt.Sprintf("n%d", i)
		c.SetNRT(n, publish(t, twoNode, n, reservedCore, nil))
	}
	all := c.Snapshot().Get("n0").FreeMilli()
	tallies := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.tallies)
	}
	if got := tallies(); got != 0 {
		t.Fatalf("%d empty nodes keep %d tallies, want 0", nodes, got)
	}
	c.SetPod("ns/a", "n7", &workload.Assignment{CPUs: cpuset.New(2, 3), Policy: cpualloc.FullPCPUs})
	if got := c.Snapshot().Get("n7").FreeMilli(); got != all-2000 {
		t.Fatalf("n7 with two CPUs held: free %d millicores, want %d", got, all-2000)
	}
	if got := tallies(); got != 1 {
		t.Fatalf("one node holding a pod: %d tallies, want 1", got)
	}
	c.DeletePod("ns/a")
	if got := c.Snapshot().Get("n7").FreeMilli(); got != all {
		t.Fatalf("n7 after its pod went: free %d millicores, want %d", got, all)
	}
	if got := tallies(); got != 0 {
		t.Fatalf("every node empty again: %d tallies, want 0", got)
	}
}

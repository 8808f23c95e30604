package core

import (
	"reflect"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

func sameTable(a, b map[int]cpualloc.Memory) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

// Nodes that report the same available memory share one table of it, and
// so do views whose in-cycle holdings leave the same free memory; a node
// with other free memory has its own, with its own figures.
func TestFreeMemoryTablesShared(t *testing.T) {
	c := NewCluster()
	for _, n := range []string{"n0", "n1", "n2"} {
		c.SetNRT(n, publishMem(t, memNode, n, nil, nil))
	}
	s := c.Snapshot()
	if !sameTable(s.Get("n0").free, s.Get("n1").free) || !sameTable(s.Get("n1").free, s.Get("n2").free) {
		t.Fatalf("three nodes with the same report: free memory %p, %p, %p, want one table", s.Get("n0").free, s.Get("n1").free, s.Get("n2").free)
	}
	six := memReq(2, cpualloc.Memory{Bytes: 6 * gib})
	for _, n := range []string{"n0", "n1"} {
		mustPlace(t, c, "ns/a-"+n, n, six)
	}
	s = c.Snapshot()
	v0, v1, v2 := s.Get("n0"), s.Get("n1"), s.Get("n2")
	if !reflect.DeepEqual(v0.free, v1.free) {
		t.Fatalf("the same pod placed on n0 and n1 leaves %v and %v", v0.free, v1.free)
	}
	if !sameTable(v0.free, v1.free) {
		t.Fatalf("n0 and n1 hold the same: free memory %p and %p, want one table", v0.free, v1.free)
	}
	if sameTable(v0.free, v2.free) || reflect.DeepEqual(v0.free, v2.free) {
		t.Fatalf("n0 holds 6Gi, n2 nothing: free memory %v and %v, want two tables", v0.free, v2.free)
	}
	if _, err := place(t, c, "ns/b", "n2", six); err != nil {
		t.Fatalf("n2 after n0 and n1 took theirs: %v", err)
	}
}

// Nodes of one machine that reserve the same CPUs share one set of them.
func TestReservedSetsShared(t *testing.T) {
	c := NewCluster()
	for _, n := range []string{"n0", "n1"} {
		c.SetNRT(n, publish(t, twoNode, n, reservedCore, nil))
	}
	c.SetNRT("n2", publish(t, twoNode, "n2", cpuset.New(1), nil))
	s := c.Snapshot()
	set := func(n string) uintptr { return reflect.ValueOf(s.Get(n).Reserved).Field(0).Pointer() }
	if set("n0") != set("n1") {
		t.Fatalf("n0 and n1 reserve %s: two sets, want one", reservedCore)
	}
	if set("n0") == set("n2") || !s.Get("n2").Reserved.Equals(cpuset.New(1)) {
		t.Fatalf("n2 reserves CPU 1: shares n0's set %s, or holds %s", s.Get("n0").Reserved, s.Get("n2").Reserved)
	}
}

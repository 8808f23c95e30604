package locus

import (
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

var intel = fixture.MustBuild(fixture.Intel2S96C)

func TestPoliciesPickBySMTWidth(t *testing.T) {
	a, err := New(intel, cpuset.New(0, 96), Policies{Whole: cpualloc.FullPCPUs, Partial: cpualloc.SpreadByPCPUs})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "locus full-pcpus, odd: spread-by-pcpus" {
		t.Errorf("name %q", a.Name())
	}
	for _, tc := range []struct {
		n     int
		whole bool
	}{{1, false}, {2, true}, {3, false}, {16, true}} {
		if got := a.WholeCores(tc.n); got != tc.whole {
			t.Errorf("%d CPUs: whole cores %v", tc.n, got)
		}
		got, err := a.Allocate(tc.n, tc.n)
		if err != nil || got.Size() != tc.n {
			t.Fatalf("%d CPUs: %s, %v", tc.n, got, err)
		}
		for _, id := range got.List() {
			if sibling := (id + 96) % 192; got.Contains(sibling) != tc.whole {
				t.Errorf("%d CPUs: got %s, whole cores %v", tc.n, got, tc.whole)
			}
		}
	}
	if a.Free().Size() != 190-22 || len(a.Pods()) != 4 || a.State().Exclusive.Size() != 22 {
		t.Fatalf("free %d pods %v", a.Free().Size(), a.Pods())
	}
}

func TestAllocatorKeepsItsOccupancy(t *testing.T) {
	a, err := New(intel, cpuset.New(0, 96), Only(cpualloc.FullPCPUs))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "locus full-pcpus" || a.Free().Contains(0) || a.Free().Size() != 190 {
		t.Fatalf("%q free %s", a.Name(), a.Free())
	}
	first, err := a.Allocate(1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Allocate(1, 2); err == nil {
		t.Fatal("the same pod was admitted twice")
	}
	second, err := a.Allocate(2, 4)
	if err != nil || second.Intersection(first).Size() > 0 {
		t.Fatalf("second pod %s overlaps %s (%v)", second, first, err)
	}
	if _, err := a.Allocate(3, 3); err == nil {
		t.Fatal("full-pcpus admitted 3 CPUs on SMT")
	}
	if err := a.Release(1); err != nil || a.Free().Size() != 186 {
		t.Fatalf("release: %v, free %d", err, a.Free().Size())
	}
	if err := a.Release(1); err == nil {
		t.Fatal("released a pod twice")
	}
}

func TestDefaultLeavesThePolicyToTheAllocator(t *testing.T) {
	a, err := New(intel, cpuset.New(0, 96), Default())
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "locus default" {
		t.Errorf("name %q", a.Name())
	}
	for _, tc := range []struct {
		n     int
		whole bool
		want  string // exact CPUs: whole cores, then a thread of a core no other pod uses
	}{{2, true, "1,97"}, {3, false, "2-3,98"}, {1, false, "4"}, {16, true, "5-12,101-108"}} {
		if got := a.WholeCores(tc.n); got != tc.whole {
			t.Errorf("%d CPUs: whole cores %v, want %v", tc.n, got, tc.whole)
		}
		got, err := a.Allocate(tc.n, tc.n)
		if err != nil || got.String() != tc.want {
			t.Fatalf("%d CPUs: %s, %v; want %s", tc.n, got, err, tc.want)
		}
	}
}

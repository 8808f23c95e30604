package kubelet

import (
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

var intel = fixture.MustBuild(fixture.Intel2S96C)

func TestCPUTopologyMatchesTheShape(t *testing.T) {
	for _, tc := range []struct {
		shape                          fixture.Shape
		cpus, cores, l3, sockets, numa int
	}{
		{fixture.Intel2S96C, 192, 96, 2, 2, 2},
		{fixture.AMDNPS4, 256, 128, 16, 2, 8},
	} {
		topo := CPUTopology(fixture.MustBuild(tc.shape))
		got := []int{topo.NumCPUs, topo.NumCores, topo.NumUncoreCache, topo.NumSockets, topo.NumNUMANodes}
		want := []int{tc.cpus, tc.cores, tc.l3, tc.sockets, tc.numa}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: counts %v, want %v", tc.shape.Name, got, want)
			}
		}
		if core, _ := topo.CPUCoreID(0); core != func() int { c, _ := topo.CPUCoreID(tc.cpus / 2); return c }() {
			t.Fatalf("%s: cpu 0 and cpu %d are not siblings", tc.shape.Name, tc.cpus/2)
		}
	}
}

func TestStaticAllocatesAroundReservedAndReleases(t *testing.T) {
	s, err := New(intel, Config{Reserved: cpuset.New(0, 96)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Free().Size() != 190 || s.Free().Contains(0) {
		t.Fatalf("free %s", s.Free())
	}
	got, err := s.Allocate(1, 3)
	if err != nil || got.Size() != 3 || got.Contains(0) || got.Contains(96) {
		t.Fatalf("3 CPUs: %s, %v", got, err)
	}
	if _, err := s.Allocate(1, 2); err == nil {
		t.Fatal("the same pod was admitted twice")
	}
	if s.Free().Size() != 187 || len(s.Pods()) != 1 {
		t.Fatalf("after one pod: free %d, pods %v", s.Free().Size(), s.Pods())
	}
	if err := s.Release(1); err != nil || s.Free().Size() != 190 {
		t.Fatalf("release: %v, free %d", err, s.Free().Size())
	}
	if err := s.Release(1); err == nil {
		t.Fatal("released a pod twice")
	}
	if _, err := s.Allocate(2, 191); err == nil {
		t.Fatal("191 CPUs admitted on a node with 190 free")
	}
}

func TestFullPCPUsOnlyRefusesOddRequests(t *testing.T) {
	s, err := New(intel, Config{Reserved: cpuset.New(0, 96), FullPCPUsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !s.WholeCores(4) || !strings.Contains(s.Name(), "full-pcpus-only") {
		t.Fatalf("name %q, whole cores %v", s.Name(), s.WholeCores(4))
	}
	if _, err := s.Allocate(1, 3); err == nil {
		t.Fatal("3 CPUs admitted with full-pcpus-only on SMT")
	}
	got, err := s.Allocate(2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range got.List() {
		if !got.Contains((id + 96) % 192) {
			t.Fatalf("%s is not whole cores", got)
		}
	}
}

// With the single-numa-node topology manager, a pod that no node can hold
// alone is refused even though the machine has the CPUs.
func TestSingleNUMANodeRefusesSplitPods(t *testing.T) {
	s, err := New(intel, Config{Reserved: cpuset.New(0, 96), TopologyManager: TopologySingleNUMANode})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Allocate(1, 60)
	if err != nil || len(intel.NodesOf(got)) != 1 {
		t.Fatalf("60 CPUs: %s, %v", got, err)
	}
	if _, err := s.Allocate(2, 60); err != nil {
		t.Fatalf("second 60 CPUs fit the other node: %v", err)
	}
	if _, err := s.Allocate(3, 40); err == nil {
		t.Fatal("40 CPUs admitted while each node has at most 35 free")
	}
	if _, err := New(intel, Config{TopologyManager: "bogus"}); err == nil {
		t.Fatal("unknown topology manager policy accepted")
	}
}

func TestOccupyStartsFromABusyNode(t *testing.T) {
	s, err := New(intel, Config{Reserved: cpuset.New(0, 96)})
	if err != nil {
		t.Fatal(err)
	}
	busy := cpuset.New(1, 2, 97)
	if err := s.Occupy(busy); err != nil {
		t.Fatal(err)
	}
	if err := s.Occupy(cpuset.New(2)); err == nil {
		t.Fatal("occupied a CPU twice")
	}
	if err := s.Occupy(cpuset.New(0)); err == nil {
		t.Fatal("occupied a reserved CPU")
	}
	got, err := s.Allocate(1, 187)
	if err != nil || got.Intersection(busy).Size() > 0 {
		t.Fatalf("187 CPUs around %s: %s, %v", busy, got, err)
	}
}

// The spreading options reach kubelet's policy: across cores, 2 CPUs are
// threads of two cores; across NUMA nodes, a request no node holds is split
// evenly, where the default packs one node first.
func TestStaticOptionsReachThePolicy(t *testing.T) {
	cores := CPUTopology(intel).CPUDetails
	s, err := New(intel, Config{DistributeAcrossCores: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Allocate(1, 2)
	if err != nil || got.Size() != 2 || cores[got.List()[0]].CoreID == cores[got.List()[1]].CoreID {
		t.Fatalf("distribute-cpus-across-cores, 2 CPUs: %s, %v", got, err)
	}
	for _, tc := range []struct {
		cfg  Config
		node int // CPUs wanted on node 0
	}{{Config{}, 96}, {Config{DistributeAcrossNUMA: true}, 50}} {
		s, err := New(intel, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Allocate(1, 100)
		if err != nil {
			t.Fatal(err)
		}
		on0 := 0
		for _, id := range got.List() {
			if cores[id].NUMANodeID == 0 {
				on0++
			}
		}
		if on0 != tc.node {
			t.Fatalf("%s, 100 CPUs: %d on node 0, want %d", s.Name(), on0, tc.node)
		}
	}
}

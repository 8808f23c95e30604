package nrt

import (
	"maps"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// twoNodes has 16 GiB on node 0 and 8 GiB on node 1, and huge pages on
// node 1 only: 512 pages of 2 MiB (1 GiB) and 4 of 1 GiB.
var twoNodes = fixture.Shape{Name: "2n", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30, MemoryByNode: map[int]uint64{1: 8 << 30},
	HugePages: []fixture.NodeHugePages{
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 100}},
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 4, Free: 4}},
	}}

// zoneResources are the zones' resources by zone and name: capacity,
// allocatable, available.
func zoneResources(t *testing.T, obj *Object) map[string]map[string][3]int64 {
	t.Helper()
	out := map[string]map[string][3]int64{}
	for _, z := range obj.Zones {
		out[z.Name] = map[string][3]int64{}
		for _, r := range z.Resources {
			out[z.Name][r.Name] = [3]int64{r.Capacity.Value(), r.Allocatable.Value(), r.Available.Value()}
		}
	}
	return out
}

// TestBuildMemoryHeld: each zone's memory and huge pages available are
// what pinned pods hold there as cpualloc.Hold spreads them over their
// memory nodes: a pod whose memory spilled to both nodes counts where it
// is, huge pages count on the node that has them, a pod without CPUs
// counts nothing, and an over-committed node shows none available.
func TestBuildMemoryHeld(t *testing.T) {
	topo := fixture.MustBuild(twoNodes) // node 0: CPUs 0-3,8-11; node 1: 4-7,12-15
	in := Input{Node: "n", Topology: topo,
		Assignments: map[string]workload.Assignment{
			"ns/spill": {CPUs: cpuset.New(0, 8), Policy: cpualloc.FullPCPUs, MemNodes: []int{0, 1}},
			"ns/huge":  {CPUs: cpuset.New(4, 12), Policy: cpualloc.FullPCPUs},
			"ns/small": {CPUs: cpuset.New(5, 13), Policy: cpualloc.FullPCPUs},
		},
		Memory: map[string]cpualloc.Memory{
			"ns/spill": {Bytes: 20 << 30},
			"ns/huge":  {Bytes: 1 << 30, HugePages2Mi: 256 << 20, HugePages1Gi: 3 << 30},
			"ns/small": {Bytes: 1 << 30},
			"ns/none":  {Bytes: 4 << 30},
		},
	}
	obj, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	got := zoneResources(t, obj)
	// Pods in name order: huge takes 1 GiB of node 1 and its pages;
	// small 1 GiB of node 1; spill fills node 0 (16 GiB) and puts 4 GiB
	// on node 1.
	want := map[string]map[string][3]int64{
		"node-0": {"memory": {16 << 30, 16 << 30, 0}},
		"node-1": {"memory": {8 << 30, 8 << 30, 2 << 30},
			ResourceHugePages2Mi: {1 << 30, 1 << 30, 768 << 20},
			ResourceHugePages1Gi: {4 << 30, 4 << 30, 1 << 30}},
	}
	for zone, res := range want {
		for name, w := range res {
			if g := got[zone][name]; g != w {
				t.Errorf("%s %s = %v, want %v", zone, name, g, w)
			}
		}
		if _, ok := got[zone]["cpu"]; len(got[zone]) != len(res)+1 || !ok {
			t.Errorf("%s has %v, want cpu and %v", zone, got[zone], res)
		}
	}

	// What the agent counted when it placed a pod wins over its request:
	// its Memory over its MemNodes, or what it holds on each node.
	placed := in
	placed.Assignments = maps.Clone(in.Assignments)
	placed.Assignments["ns/spill"] = workload.Assignment{CPUs: cpuset.New(0, 8), Policy: cpualloc.FullPCPUs,
		MemNodes: []int{0, 1}, Memory: cpualloc.Memory{Bytes: 18 << 30}, MemHeld: map[int]cpualloc.Memory{0: {Bytes: 12 << 30}, 1: {Bytes: 6 << 30}}}
	placed.Assignments["ns/small"] = workload.Assignment{CPUs: cpuset.New(5, 13), Policy: cpualloc.FullPCPUs, Memory: cpualloc.Memory{Bytes: 512 << 20}}
	if obj, err = Build(placed); err != nil {
		t.Fatal(err)
	}
	got = zoneResources(t, obj)
	if m0, m1 := got["node-0"]["memory"][2], got["node-1"]["memory"][2]; m0 != 4<<30 || m1 != 512<<20 {
		t.Errorf("memory available %d and %d, want 4 GiB on node 0 (16 less 12 held) and 512 MiB on node 1 (8 less 1 huge, 0.5 small, 6 spill)", m0, m1)
	}

	// More than a node holds: none available, never negative.
	in.Memory["ns/small"] = cpualloc.Memory{Bytes: 64 << 30, HugePages1Gi: 8 << 30}
	obj, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	got = zoneResources(t, obj)
	if m, h := got["node-1"]["memory"], got["node-1"][ResourceHugePages1Gi]; m[2] != 0 || h[2] != 0 {
		t.Errorf("over-committed node 1: memory %v, hugepages-1Gi %v, want none available", m, h)
	}
}

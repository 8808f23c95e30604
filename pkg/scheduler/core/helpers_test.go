package core

import (
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// twoNode is the node agent tests' machine: two NUMA nodes of four
// two-thread cores, one L3 each. Node 0 has CPUs 0-3 and 8-11, node 1 4-7
// and 12-15; c and c^8 are siblings.
var twoNode = fixture.Shape{Name: "2s-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}

// splitL3 has two NUMA nodes of four cores, each node two L3 caches of two
// cores: CPUs 0-1,16-17 share an L3, 2-3,18-19 the next, and so on.
var splitL3 = fixture.Shape{Name: "1s-2n-2l3", Sockets: 1, NUMAPerSocket: 2, L3PerNUMA: 2, CoresPerSocket: 8,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}

// reservedCore is core 0 of twoNode, as a kubelet's --reserved-cpus.
var reservedCore = cpuset.New(0, 8)

// publish builds the NodeResourceTopology the agent would publish for a
// node of shape s with these holdings.
func publish(t testing.TB, s fixture.Shape, node string, reserved cpuset.CPUSet, held map[string]workload.Assignment) *nrt.Object {
	t.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(s), Reserved: reserved, Assignments: held})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func req(cpus int, policy cpualloc.Policy, requestMilli int64) Request {
	if policy == "" {
		policy = cpualloc.FullPCPUsThenThreads
	}
	return Request{CPURequest: workload.CPURequest{CPUs: cpus, Policy: policy, RequestMilli: requestMilli}}
}

// place places on the node's current view and assumes the result, as the
// framework's Filter then Reserve do.
func place(t testing.TB, c *Cluster, key, node string, r Request) (Placement, error) {
	t.Helper()
	v := c.Snapshot().Get(node)
	p, err := Place(v, 0, r)
	if err != nil {
		return p, err
	}
	return c.Assume(key, node, v, p, r)
}

func mustPlace(t testing.TB, c *Cluster, key, node string, r Request) Placement {
	t.Helper()
	p, err := place(t, c, key, node, r)
	if err != nil {
		t.Fatalf("placing %s on %s: %v", key, node, err)
	}
	return p
}

// wholeCores says whether cpus are whole cores of topo.
func wholeCores(topo *topology.Topology, cpus cpuset.CPUSet) bool {
	byCore := map[int]int{}
	for _, id := range cpus.List() {
		c, _ := topo.CPU(id)
		byCore[c.Core]++
	}
	for core, n := range byCore {
		if n != len(topo.CPUsWhere(func(c topology.CPU) bool { return c.Core == core }).List()) {
			return false
		}
	}
	return true
}

func kind(err error) Kind {
	if u, ok := err.(*Unfit); ok {
		return u.Kind
	}
	return -1
}

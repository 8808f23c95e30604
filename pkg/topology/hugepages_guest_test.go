package topology_test

import (
	"testing"

	"github.com/locus-project/locus/internal/hugetest"
	"github.com/locus-project/locus/pkg/topology"
)

// On a real kernel with two nodes, pages reserved on node 1 only are found
// on node 1 only, all of them free.
func TestGuestHugePagesFoundOnTheirNode(t *testing.T) {
	hugetest.Reserve(t, 1, 16)
	top, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Nodes) < 2 {
		t.Fatalf("%d NUMA nodes, the test needs two", len(top.Nodes))
	}
	n0, n1 := top.Nodes[0], top.Nodes[1]
	if h := n1.HugePagesOf(topology.HugePages2MiKiB); h.Total != 16 || h.Free != 16 {
		t.Errorf("node 1: 2 MiB pool %+v, want 16 pages, all free", h)
	}
	if h := n0.HugePagesOf(topology.HugePages2MiKiB); h.Total != 0 {
		t.Errorf("node 0: 2 MiB pool %+v, want none reserved", h)
	}
	t.Logf("node 0 pools %+v, node 1 pools %+v", n0.HugePages, n1.HugePages)
}

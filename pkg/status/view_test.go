package status

import (
	"slices"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The views learn each workload's cpuset.mems from the status; text that
// is not a node list leaves them on the CPUs' nodes.
func TestViewSnapshotMemNodes(t *testing.T) {
	st := Status{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Workloads: []WorkloadStatus{
		{Name: "spilled", Pool: "exclusive", CPUs: "0-1", Mems: "0-1", NUMANodes: []int{0}},
		{Name: "local", Pool: "exclusive", CPUs: "4", Mems: "1", NUMANodes: []int{1}},
		{Name: "unread", Pool: "exclusive", CPUs: "2", Mems: "0-9223372036854775807", NUMANodes: []int{0}},
		{Name: "none", Pool: "shared", CPUs: "3"},
	}}
	st.Workloads[0].MemoryByNode = []NodeMemory{{Node: 0, Bytes: 3 << 30}, {Node: 1, Bytes: 1 << 30, HugePages2Mi: 64 << 20}}
	snap := ViewSnapshot(st, fixture.MustBuild(fixture.MemoryOnly))
	if h := snap.Workloads[0].MemoryHeldByNode; len(h) != 2 || h[0] != 3<<30 || h[1] != 1<<30 {
		t.Errorf("spilled holds %v, want 3 GiB on node 0 and 1 GiB on node 1 as the status says", h)
	}
	if h := snap.Workloads[1].MemoryHeldByNode; h != nil {
		t.Errorf("local holds %v: the status says nothing", h)
	}
	want := map[string][]int{"spilled": {0, 1}, "local": {1}, "unread": nil, "none": nil}
	for _, w := range snap.Workloads {
		if !slices.Equal(w.MemNodes, want[w.Name]) {
			t.Errorf("%s: memNodes %v, want %v", w.Name, w.MemNodes, want[w.Name])
		}
	}
}

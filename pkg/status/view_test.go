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
	snap := ViewSnapshot(st, fixture.MustBuild(fixture.MemoryOnly))
	want := map[string][]int{"spilled": {0, 1}, "local": {1}, "unread": nil, "none": nil}
	for _, w := range snap.Workloads {
		if !slices.Equal(w.MemNodes, want[w.Name]) {
			t.Errorf("%s: memNodes %v, want %v", w.Name, w.MemNodes, want[w.Name])
		}
	}
}

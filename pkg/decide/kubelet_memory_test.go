package decide

import (
	"reflect"
	"testing"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The static memory manager's blocks and reserve are taken from the nodes'
// memory before Locus places any: each block's kinds on its nodes, in pod
// and container order; the None policy's checkpoint takes nothing.
func TestKubeletMemoryTaken(t *testing.T) {
	mem := &kubelet.MemoryManager{Policy: "Static", SystemReserved: map[int]uint64{0: 1 << 30},
		Assignments: map[string]map[string][]kubelet.Block{
			"uid-b": {"app": {{Resource: "memory", Bytes: 3 << 30, Nodes: []int{0, 1}}}},
			"uid-a": {"app": {{Resource: "hugepages-1Gi", Bytes: 1 << 30, Nodes: []int{1}}, {Resource: "cpu", Bytes: 4, Nodes: []int{0}}}}}}
	kube, _ := FromKubelet(kubelet.State{Memory: mem})
	want := []MemBlock{{Memory: cpualloc.Memory{HugePages1Gi: 1 << 30}, Nodes: []int{1}}, {Memory: cpualloc.Memory{Bytes: 3 << 30}, Nodes: []int{0, 1}}}
	if !reflect.DeepEqual(kube.MemBlocks, want) || kube.MemReserved[0] != 1<<30 {
		t.Fatalf("blocks %+v, reserved %v; want %+v and 1Gi on node 0", kube.MemBlocks, kube.MemReserved, want)
	}
	topo := fixture.MustBuild(fixture.Shape{Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 2, ThreadsPerCore: 1,
		Siblings: fixture.SiblingsSplit, MemoryPerNode: 2 << 30})
	// Node 0: 2Gi less the 1Gi reserve, the block's first 1Gi; node 1: its
	// other 2Gi.
	if free := freeMemory(topo, kube); free[0].Bytes != 0 || free[1].Bytes != 0 {
		t.Fatalf("free %v, want nothing left", free)
	}
	mem.Policy = "None"
	if kube, _ = FromKubelet(kubelet.State{Memory: mem}); kube.MemBlocks != nil {
		t.Fatalf("policy None: blocks %+v", kube.MemBlocks)
	}
}

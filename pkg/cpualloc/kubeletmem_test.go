package cpualloc

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

const mib = uint64(1) << 20

// kubeletMemCase is one allocation case of kubelet v1.33.13's Memory
// Manager static policy tests (pkg/kubelet/cm/memorymanager/
// policy_static_test.go: TestStaticPolicyAllocate, its WithInitContainers
// and WithRestartableInitContainers variants, and
// TestStaticPolicyGetTopologyHints), as data: each node's free memory and
// huge pages, the pod's memory need, and the nodes kubelet binds it to
// (none: kubelet refuses it). A pod with init containers needs the larger
// of its largest init container and the sum of its app containers, which is
// what kubelet ends up holding. The cases' CPU request ("1000Mi") is one
// CPU here; kubelet's tables give no SLIT distances, so every pair of nodes
// is at the same distance.
type kubeletMemCase struct {
	name    string
	free    []Memory // by node id
	need    Memory
	kubelet []int
}

func kubeletMemCases() []kubeletMemCase {
	g1 := Memory{Bytes: 1536 * mib, HugePages1Gi: gib}
	half := Memory{Bytes: 512 * mib, HugePages1Gi: gib}
	pod := Memory{Bytes: gib, HugePages1Gi: gib} // requirementsGuaranteed
	both := func(n uint64) Memory { return Memory{Bytes: n * gib, HugePages1Gi: n * gib} }
	return []kubeletMemCase{
		{"default hint, one node", []Memory{g1}, pod, []int{0}},
		{"default hint fails: no node with enough", []Memory{{Bytes: 512 * mib}}, pod, nil},
		// kubelet refuses the next four because a node that already holds a
		// single-node assignment, or belongs to another group, may not join a
		// new group; Locus does not keep such groups.
		{"preferred hint, default hint not preferred", []Memory{half, half, half}, pod, nil},
		{"hint {0} not preferred, no node to extend it with", []Memory{half, half, half}, pod, nil},
		{"preferred hint {1}, extended hint not preferred", []Memory{half, half, half}, pod, nil},
		{"a two-node hint over the node of a single-node pod", []Memory{half, half}, pod, nil},
		{"memory from multiple NUMA nodes", []Memory{half, half, half, half}, pod, []int{0, 1}},
		{"init 1Gi, 2Gi; apps 3Gi, 4Gi", []Memory{{Bytes: 7680 * mib, HugePages1Gi: 8 * gib}}, both(7), []int{0}},
		{"init 4Gi, 3Gi; apps 2Gi, 1Gi", []Memory{{Bytes: 7680 * mib, HugePages1Gi: 8 * gib}}, both(4), []int{0}},
		{"init 7Gi, 4Gi; apps 4Gi, 3Gi", []Memory{{Bytes: 7680 * mib, HugePages1Gi: 8 * gib}}, both(7), []int{0}},
		{"init 7Gi, 4Gi; apps 5Gi, 2Gi", []Memory{{Bytes: 10240 * mib, HugePages1Gi: 10 * gib}}, both(7), []int{0}},
		{"restartable init 2Gi, 4Gi kept beside app 1Gi", []Memory{both(7)}, both(7), []int{0}},
		{"hints: nodes 0 and 1 grouped and full", []Memory{{}, {Bytes: gib}, g1, g1}, pod, []int{2}},
		{"hints: one node holds it, kubelet's group spans two",
			[]Memory{{}, {Bytes: gib, HugePages2Mi: 16 * mib}}, Memory{Bytes: gib, HugePages2Mi: 16 * mib}, []int{0, 1}},
	}
}

// TestKubeletMemoryManagerCases: Locus serves every case kubelet's Memory
// Manager serves, on no more nodes than kubelet binds.
func TestKubeletMemoryManagerCases(t *testing.T) {
	for _, tc := range kubeletMemCases() {
		t.Run(tc.name, func(t *testing.T) {
			res, err := placeKubeletCase(tc)
			if tc.kubelet == nil {
				t.Logf("kubelet refuses; Locus: %v, %v", res.MemNodes, err)
				return
			}
			if err != nil {
				t.Fatalf("kubelet binds %v, Locus refuses: %v", tc.kubelet, err)
			}
			if len(res.MemNodes) > len(tc.kubelet) {
				t.Fatalf("Locus binds %v, more nodes than kubelet's %v", res.MemNodes, tc.kubelet)
			}
			t.Logf("kubelet %v, Locus %v", tc.kubelet, res.MemNodes)
		})
	}
}

func placeKubeletCase(tc kubeletMemCase) (Result, error) {
	n := len(tc.free)
	shape := fixture.Shape{Name: fmt.Sprintf("kubelet-mm-%dn", n), Sockets: 1, NUMAPerSocket: n, L3PerNUMA: 1,
		CoresPerSocket: 2 * n, ThreadsPerCore: 1, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 * gib}
	topo := fixture.MustBuild(shape)
	free := map[int]Memory{}
	for id, f := range tc.free {
		free[id] = f
	}
	return Allocate(topo, State{Free: free}, cpuset.New(), Request{CPUs: 1, Memory: tc.need})
}

// TestKubeletMemoryManagerCasesOutcome pins the outcome the comparison in
// docs/benchmarks.md records, refusals included.
func TestKubeletMemoryManagerCasesOutcome(t *testing.T) {
	want := [][]int{{0}, nil, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0}, {0}, {0}, {0}, {0}, {2}, {1}}
	for i, tc := range kubeletMemCases() {
		res, err := placeKubeletCase(tc)
		if got := res.MemNodes; err != nil && want[i] != nil || err == nil && !slices.Equal(got, want[i]) {
			t.Errorf("%s: Locus %v (%v), want %v", tc.name, got, err, want[i])
		}
	}
}

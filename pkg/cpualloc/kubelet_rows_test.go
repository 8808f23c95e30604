package cpualloc

import (
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// machineOf builds a machine of cores cores with threads threads each (CPU
// core+i*cores is thread i of core), placing each core with place. Nodes of
// one socket are 12 apart, others 21, as in kubelet's fixtures under
// bench/kubelet.
func machineOf(t testing.TB, cores, threads int, place func(core int) (socket, node, l3 int)) *topology.Topology {
	t.Helper()
	topo := &topology.Topology{Isolated: cpuset.New()}
	socketsOf := map[int][]int{}
	var nodes []int
	for i := range threads {
		for c := range cores {
			s, n, l3 := place(c)
			topo.CPUs = append(topo.CPUs, topology.CPU{ID: c + i*cores, Core: c, Socket: s, Die: s, NUMA: n, L3: l3})
			if !slices.Contains(socketsOf[n], s) {
				socketsOf[n] = append(socketsOf[n], s)
			}
			if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		node := topology.NUMANode{ID: n, MemoryTotal: 64 * gib, MemoryFree: 48 * gib}
		node.CPUs = topo.CPUsWhere(func(c topology.CPU) bool { return c.NUMA == n })
		for _, m := range nodes {
			d := 21
			switch {
			case m == n:
				d = 10
			case slices.Equal(socketsOf[m], socketsOf[n]):
				d = 12
			}
			node.Distances = append(node.Distances, d)
		}
		topo.Nodes = append(topo.Nodes, node)
	}
	if err := topo.Validate(); err != nil {
		t.Fatal(err)
	}
	return topo
}

// kubelet's CPU manager test topologies (pkg/kubelet/cm/cpumanager
// policy_test.go, v1.33), built from their shape.
var (
	// topoDualSocketSingleNumaPerSocketSMTUncore: 2 sockets of one node, 96
	// two-thread cores each, an L3 per 8 cores.
	dualSocketSMTUncore = func(t testing.TB) *topology.Topology {
		return machineOf(t, 192, 2, func(c int) (int, int, int) { return c / 96, c / 96, c / 8 })
	}
	// topoSmallDualSocketSingleNumaPerSocketNoSMTUncore: 2 sockets of one
	// node, 32 one-thread cores each, an L3 per 8 cores.
	smallDualSocketNoSMTUncore = func(t testing.TB) *topology.Topology {
		return machineOf(t, 64, 1, func(c int) (int, int, int) { return c / 32, c / 32, c / 8 })
	}
	// fakeTopoMultiSocketDualSocketPerNumaHT: 4 sockets of 10 two-thread
	// cores, each node spanning two sockets, one L3 id throughout.
	nodeOverTwoSockets = func(t testing.TB) *topology.Topology {
		return machineOf(t, 40, 2, func(c int) (int, int, int) { return c / 10, c / 20, 0 })
	}
)

// TestKubeletRowsOnSockets replays kubelet's own cases where a pod's
// containers, placed one after another, or a node-sized request must stay
// on kubelet's sockets: the answers are kubelet's.
func TestKubeletRowsOnSockets(t *testing.T) {
	for _, tc := range []struct {
		name       string
		machine    func(testing.TB) *topology.Topology
		taken      string
		reserved   string
		containers []int
		policy     Policy
		want       string
		sockets    int
	}{
		{
			// TestStaticPolicyAddWithUncoreAlignment, "GuPodMainAndSidecarContainer,
			// DualSocketHTUncore, ExpectAllocTwoUncore": the sidecar joins the
			// main container's socket, not the best-fitting L3 of the other.
			name: "uncore SMT: main 12 and sidecar 2", machine: dualSocketSMTUncore,
			reserved: "0-1,96-97,192-193,288-289", containers: []int{12, 2}, policy: FullPCPUs,
			want: "2-8,194-200", sockets: 1,
		},
		{
			// "GuPodMultiContainer, DualSocketSMTUncore, FragmentedUncore,
			// ExpectAllocTwoUncore" (no SMT): L3 1 held.
			name: "uncore no SMT: two containers of 4", machine: smallDualSocketNoSMTUncore,
			reserved: "0-1,32-33", taken: "8-15", containers: []int{4, 4}, policy: FullPCPUs,
			want: "2-5,16-19", sockets: 1,
		},
		{
			// A thread held on each node: no node holds 40, but a free
			// socket of each does, 2 sockets where node by node takes 3.
			name: "node over two sockets: node-sized, default", machine: nodeOverTwoSockets,
			taken: "0,20", containers: []int{40},
			want: "10-19,30-39,50-59,70-79", sockets: 2,
		},
		{
			name: "node over two sockets: node-sized, full-pcpus", machine: nodeOverTwoSockets,
			taken: "0,20", containers: []int{40}, policy: FullPCPUs,
			want: "10-19,30-39,50-59,70-79", sockets: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := tc.machine(t)
			a, err := NewAllocator(topo)
			if err != nil {
				t.Fatal(err)
			}
			st := State{Exclusive: BitsOf(mustParse(t, tc.taken))}
			got := cpuset.New()
			for _, n := range tc.containers {
				req := Request{CPUs: n, Policy: tc.policy}
				res, err := a.Allocate(st, mustParse(t, tc.reserved), req)
				if err != nil {
					t.Fatalf("%d CPUs: %v", n, err)
				}
				got = got.Union(res.CPUs)
				st = st.With(res, req)
			}
			sockets := map[int]bool{}
			for _, c := range topo.CPUs {
				if got.Contains(c.ID) {
					sockets[c.Socket] = true
				}
			}
			if !got.Equals(mustParse(t, tc.want)) || len(sockets) != tc.sockets {
				t.Fatalf("cpus = %s on %d sockets, want %s on %d", got, len(sockets), tc.want, tc.sockets)
			}
		})
	}
}

// TestDistributeCountsL3GroupsInWholeCores: a share of whole cores is filled
// with whole cores, so the L3 groups a node's fill spans are counted in
// theirs. Node 0 has a thread held in each of its L3 groups: 7 usable CPUs
// each, 6 of whole cores; 14 CPUs take 2 of node 1's L3 groups, where node 0
// (fuller, and 2 groups by usable CPUs) would take 3.
func TestDistributeCountsL3GroupsInWholeCores(t *testing.T) {
	topo := machineOf(t, 32, 2, func(c int) (int, int, int) { return c / 16, c / 16, c / 4 })
	res, err := Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "0,4,8,12"))}, cpuset.New(),
		Request{CPUs: 14, Policy: DistributeAcrossNUMA})
	if err != nil {
		t.Fatal(err)
	}
	if want := mustParse(t, "16-22,48-54"); !res.CPUs.Equals(want) {
		t.Fatalf("cpus = %s, want %s", res.CPUs, want)
	}
}

package numad

import (
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestPinnedOf(t *testing.T) {
	st := status.Status{
		Node: status.NodeStatus{Exclusive: "2-3", KubeletCPUs: "6"},
		Workloads: []status.WorkloadStatus{
			{Name: "db", MemoryByNode: []status.NodeMemory{{Node: 0, Bytes: 4 << 30, HugePages2Mi: 1 << 30}}},
			{Name: "vm", MemoryByNode: []status.NodeMemory{{Node: 0, Bytes: 1 << 30}, {Node: 1, Bytes: 2 << 30}}},
			{Name: "shared"},
		},
	}
	p, err := PinnedOf(st)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CPUs.Equals(cpuset.New(2, 3, 6)) || p.Memory[0] != 5<<30 || p.Memory[1] != 2<<30 {
		t.Errorf("pinned %v, memory %v; want 2-3,6 and 5 GiB on node 0, 2 GiB on node 1 (huge pages apart)", p.CPUs, p.Memory)
	}
	// Sums that would wrap hold the whole node instead.
	st.Workloads = []status.WorkloadStatus{{MemoryByNode: []status.NodeMemory{{Node: 0, Bytes: ^uint64(0)}}},
		{MemoryByNode: []status.NodeMemory{{Node: 0, Bytes: 2}}}}
	if p, err := PinnedOf(st); err != nil || p.Memory[0] != ^uint64(0) {
		t.Errorf("overflowing sum: %v %v, want the maximum", p.Memory, err)
	}
	for _, bad := range []status.Status{
		{Node: status.NodeStatus{Exclusive: "0-9223372036854775807"}},
		{Node: status.NodeStatus{KubeletCPUs: "x"}},
		{Workloads: []status.WorkloadStatus{{Name: "w", MemoryByNode: []status.NodeMemory{{Node: -1}}}}},
		{Workloads: make([]status.WorkloadStatus, MaxStatusWorkloads+1)},
	} {
		if _, err := PinnedOf(bad); err == nil || !strings.HasPrefix(err.Error(), "the agent's status: ") {
			t.Errorf("%+v: err %v, want one naming the agent's status", bad.Node, err)
		}
	}
}

func TestPoolLeavesOutPinnedAndIsolated(t *testing.T) {
	topo := fixture.MustBuild(fixture.AMDNPS4) // 256 CPUs
	topo.Isolated = cpuset.New(0, 1)
	pool := Pool(topo, Pinned{CPUs: cpuset.New(2, 3)})
	if pool.Size() != 252 || pool.Contains(0) || pool.Contains(3) || !pool.Contains(4) {
		t.Errorf("pool %v: want every CPU but 0-3", pool)
	}
}

func TestAvailable(t *testing.T) {
	mem := map[int]balancer.NodeMemory{
		0: {Total: 16 << 30, Free: 12 << 30}, // 10 GiB held, 2 of them untouched yet
		1: {Total: 16 << 30, Free: 15 << 30}, // nothing held
		2: {Total: 16 << 30, Free: 1 << 30},  // held beyond its total (a stale status)
	}
	got := Available(mem, map[int]uint64{0: 10 << 30, 2: 20 << 30, 9: 1})
	want := map[int]uint64{0: 6 << 30, 1: 15 << 30, 2: 0}
	for n, w := range want {
		if got[n].Free != w || got[n].Total != 16<<30 {
			t.Errorf("node %d: %+v, want %d free", n, got[n], w)
		}
	}
	if len(got) != 3 {
		t.Errorf("nodes %v: a node held but not measured appeared", got)
	}
}

func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		adv  balancer.Advice
		want string
	}{
		{balancer.Advice{Fits: true, Nodes: []int{1}}, "1"},
		{balancer.Advice{Fits: true, Nodes: []int{3, 2}}, "2-3"},
		{balancer.Advice{Fits: true, Nodes: []int{0, 2, 3}}, "0,2-3"},
		{balancer.Advice{Fits: false, Nodes: []int{0}}, "0-3"}, // nothing fits: every node, as numad
		{balancer.Advice{}, "0-3"},                             // every CPU pinned
	} {
		if got := Answer(tc.adv, []int{0, 1, 2, 3}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.adv, got, tc.want)
		}
	}
}

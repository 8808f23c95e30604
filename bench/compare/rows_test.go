package compare

import (
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"

	"github.com/locus-project/locus/bench/kubelet"
)

// kubeletRow is a case of kubelet's own CPU manager tests, or one on its
// fixtures: a machine, the CPUs held before, and a pod's containers placed
// one after another, as kubelet admits them.
type kubeletRow struct {
	name, machine string
	reserved      cpuset.CPUSet
	// taken are held by other pods; uncores, when set, adds every CPU of
	// those L3 caches.
	taken      cpuset.CPUSet
	uncores    []int
	containers []int
	kubelet    kubelet.Config
	locus      cpualloc.Policy
}

var kubeletRows = []kubeletRow{
	{
		// TestStaticPolicyAddWithUncoreAlignment "GuPodMainAndSidecarContainer,
		// DualSocketHTUncore, ExpectAllocTwoUncore": kubelet gives 2-8,194-200.
		name: "uncore dual socket SMT, main and sidecar", machine: "topoDualSocketSingleNumaPerSocketSMTUncore",
		reserved: cpuset.New(0, 1, 96, 97, 192, 193, 288, 289), containers: []int{12, 2},
		kubelet: kubelet.Config{FullPCPUsOnly: true, AlignByUncoreCache: true}, locus: cpualloc.FullPCPUs,
	},
	{
		// "GuPodMultiContainer, DualSocketSMTUncore, FragmentedUncore,
		// ExpectAllocTwoUncore": kubelet gives 2-5,16-19.
		name: "uncore dual socket no SMT, two containers", machine: "topoSmallDualSocketSingleNumaPerSocketNoSMTUncore",
		reserved: cpuset.New(0, 1, 32, 33), uncores: []int{1}, containers: []int{4, 4},
		kubelet: kubelet.Config{FullPCPUsOnly: true, AlignByUncoreCache: true}, locus: cpualloc.FullPCPUs,
	},
	{
		// One NUMA node spans two sockets; a thread taken on each node
		// leaves a socket of each free, which a node-sized request fills.
		name: "node spanning two sockets, node-sized request", machine: "fakeTopoMultiSocketDualSocketPerNumaHT",
		taken: cpuset.New(0, 20), containers: []int{40},
	},
	{
		name: "node spanning two sockets, node-sized whole cores", machine: "fakeTopoMultiSocketDualSocketPerNumaHT",
		taken: cpuset.New(0, 20), containers: []int{40},
		kubelet: kubelet.Config{FullPCPUsOnly: true}, locus: cpualloc.FullPCPUs,
	},
}

// TestKubeletTableRows: on kubelet's own cases Locus spans at most kubelet's
// sockets and NUMA nodes, and is worse on no measure without being better on
// another.
func TestKubeletTableRows(t *testing.T) {
	ms, err := Machines()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Machine{}
	for _, m := range ms {
		byName[m.Name] = m
	}
	for _, row := range kubeletRows {
		t.Run(row.name, func(t *testing.T) {
			m, ok := byName[row.machine]
			if !ok {
				t.Fatalf("no machine %s", row.machine)
			}
			taken := row.taken
			for _, c := range m.Topology.CPUs {
				for _, u := range row.uncores {
					if c.L3 == u {
						taken = taken.Union(cpuset.New(c.ID))
					}
				}
			}
			cfg := row.kubelet
			cfg.Reserved = row.reserved
			k, err := kubelet.New(m.Topology, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Occupy(taken.Difference(row.reserved)); err != nil {
				t.Fatal(err)
			}
			alloc, err := cpualloc.NewAllocator(m.Topology)
			if err != nil {
				t.Fatal(err)
			}
			st := cpualloc.State{Exclusive: cpualloc.BitsOf(taken)}
			kube, locus := cpuset.New(), cpuset.New()
			for i, n := range row.containers {
				got, err := k.Allocate(i, n)
				if err != nil {
					t.Fatalf("kubelet, container %d (%d CPUs): %v", i, n, err)
				}
				kube = kube.Union(got)
				req := cpualloc.Request{CPUs: n, Policy: row.locus}
				res, err := alloc.Allocate(st, row.reserved, req)
				if err != nil {
					t.Fatalf("locus, container %d (%d CPUs): %v", i, n, err)
				}
				locus = locus.Union(res.CPUs)
				st = st.With(res, req)
			}
			g := newGeometry(m.Topology)
			free := m.Topology.CPUSet().Difference(taken).Difference(row.reserved)
			km, lm := g.measure(kube, free), g.measure(locus, free)
			if lm.Sockets > km.Sockets || lm.Nodes > km.Nodes || Pareto(lm, km) > 0 {
				t.Fatalf("locus %s (%s), kubelet %s (%s)", locus, lm, kube, km)
			}
			t.Logf("locus %s (%s), kubelet %s (%s)", locus, lm, kube, km)
		})
	}
}

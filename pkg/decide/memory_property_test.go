package decide

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// TestMemoryProperties: over random sequences of pods arriving and leaving
// on a node of four unequal NUMA nodes with huge pages on two of them, no
// node's memory or huge pages are ever held beyond its capacity, every
// pinned workload's request is held in full, and cpuset.mems always names
// at least its CPUs' nodes.
func TestMemoryProperties(t *testing.T) {
	shape := fixture.Shape{Name: "mem-4n", Sockets: 2, NUMAPerSocket: 2, L3PerNUMA: 1, CoresPerSocket: 8, ThreadsPerCore: 2,
		Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 * gib, MemoryByNode: map[int]uint64{1: 4 * gib, 3: 32 * gib},
		HugePages: []fixture.NodeHugePages{
			{Node: 0, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 256, Free: 256}},
			{Node: 2, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 4, Free: 4}}}}
	topo, err := fixture.Build(shape)
	if err != nil {
		t.Fatal(err)
	}
	capacity := cpualloc.CapacityReserved(topo, nil)
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 0x3e))
		live := map[string]workload.Workload{}
		mem := Memory{}
		for step := range 30 {
			if r.IntN(4) == 0 && len(live) > 0 {
				names := slices.Sorted(maps.Keys(live))
				delete(live, names[r.IntN(len(names))])
			} else {
				w := testWorkload(fmt.Sprintf("w%02d", step), 2*(1+r.IntN(2)), true, false, nil)
				w.CPU.Memory = cpualloc.Memory{Bytes: uint64(r.IntN(24)) * gib / 2}
				if r.IntN(3) == 0 {
					w.CPU.Memory.HugePages2Mi = uint64(r.IntN(200)) << 21
				}
				if r.IntN(4) == 0 {
					w.CPU.Memory.HugePages1Gi = uint64(r.IntN(3)) << 30
				}
				live[w.Name] = w
			}
			var ws []workload.Workload
			for _, name := range slices.Sorted(maps.Keys(live)) {
				ws = append(ws, live[name])
			}
			obs := Observation{Topology: topo, Config: &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New()},
				Workloads: ws, Prepared: map[string]bool{}}
			for _, w := range ws {
				obs.Prepared[w.Cgroup] = true
			}
			ready := Decide(obs, mem)
			mem = ready.Memory
			checkMemory(t, fmt.Sprintf("seed %d step %d", seed, step), topo, capacity, live, ready)
		}
	}
}

func checkMemory(t *testing.T, at string, topo *topology.Topology, capacity map[int]cpualloc.Memory, live map[string]workload.Workload, r Ready) {
	t.Helper()
	total := map[int]cpualloc.Memory{}
	for _, st := range r.Desired.Workloads {
		a, ok := r.Desired.Assignments[st.Name]
		if !ok {
			if len(st.MemoryByNode) > 0 {
				t.Fatalf("%s: %s holds %v without CPUs of its own", at, st.Name, st.MemoryByNode)
			}
			continue
		}
		var sum cpualloc.Memory
		for id, m := range st.MemoryByNode {
			total[id], sum = total[id].Add(m), sum.Add(m)
		}
		if sum != live[st.Name].CPU.Memory {
			t.Fatalf("%s: %s holds %v in all, asked %v", at, st.Name, sum, live[st.Name].CPU.Memory)
		}
		mems, err := topology.ParseNodeList(memsOf(t, r, st.Cgroup))
		if err != nil {
			t.Fatal(err)
		}
		if !cpuset.New(topo.NodesOf(a.CPUs)...).IsSubsetOf(cpuset.New(mems...)) {
			t.Fatalf("%s: %s on CPUs %s has cpuset.mems %v", at, st.Name, a.CPUs, mems)
		}
		for id := range st.MemoryByNode {
			if !st.MemoryByNode[id].IsZero() && !cpuset.New(mems...).Contains(id) {
				t.Fatalf("%s: %s holds memory on node %d outside its cpuset.mems %v", at, st.Name, id, mems)
			}
		}
	}
	for id, held := range total {
		if c := capacity[id]; held.Bytes > c.Bytes || held.HugePages2Mi > c.HugePages2Mi || held.HugePages1Gi > c.HugePages1Gi {
			t.Fatalf("%s: node %d holds %v, capacity %v", at, id, held, c)
		}
	}
}

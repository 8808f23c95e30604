package view

import (
	"time"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

// machineOnly is a shape without an agent: no owners, no usage.
func machineOnly(s fixture.Shape) *Snapshot {
	return &Snapshot{Time: t0, Source: "host", Topology: fixture.MustBuild(s)}
}

// smallAgent is the four-CPU machine with an agent: CPU 0 reserved, redis
// bound to CPUs 1-2, batch in the BE pool (CPU 3, which is also shared).
func smallAgent() *Snapshot {
	return &Snapshot{Time: t0, Source: "agent 127.0.0.1:9316", Agent: true, Topology: fixture.MustBuild(fixture.Small4),
		Pools: Pools{Reserved: "0", Exclusive: "1-2", Shared: "3", BE: "3"},
		Workloads: []Workload{
			{Name: "redis", QOSClass: "LS", Pool: "exclusive", CPUs: "1-2", NUMANodes: []int{0}, PIDs: 1,
				CPUUsage: f64(1.5), MemoryByNode: map[int]uint64{0: 3 << 29},
				Migration: &Migration{Time: t0.Add(-time.Minute), Reason: "MemoryLocalityCompleted", LocalRatio: intp(100), PagesMigrated: 1000}},
			{Name: "batch", QOSClass: "BE", Pool: "be", CPUs: "3", NUMANodes: []int{0}, PIDs: 2,
				CPUUsage: f64(0.25), MemoryByNode: map[int]uint64{0: 64 << 20}},
		},
		CPUBusy:    map[int]float64{0: 0.05, 1: 0.9, 2: 0.6, 3: 0.25},
		NodeMemory: map[int]NodeMemory{0: {Total: 16 << 30, Free: 10 << 30}},
	}
}

// memnodeAgent is the two-socket machine with a memory-only node: CPUs 0-1
// reserved, redis bound to 2-5, vm1 static-burst on 6-7, a BE pool
// narrower than the shared one, and memory spread over the three nodes.
func memnodeAgent() *Snapshot {
	return &Snapshot{Time: t0, Source: "agent 127.0.0.1:9316", Agent: true, Topology: fixture.MustBuild(fixture.MemoryOnly),
		Pools: Pools{Reserved: "0-1", Exclusive: "2-5", Shared: "6-31", BE: "24-31"},
		Workloads: []Workload{
			{Name: "redis", QOSClass: "LS", Pool: "exclusive", CPUs: "2-5", NUMANodes: []int{0}, PIDs: 1,
				CPUUsage: f64(2.5), MemoryByNode: map[int]uint64{0: 6 << 30, 1: 2 << 30, 2: 1 << 30}},
			{Name: "vm1", QOSClass: "LS", Pool: "static-burst", CPUs: "6-7", NUMANodes: []int{0}, PIDs: 3,
				CPUUsage: f64(0.4), MemoryByNode: map[int]uint64{0: 4 << 30}},
			{Name: "batch", QOSClass: "BE", Pool: "be", CPUs: "24-31", NUMANodes: []int{1}, PIDs: 2,
				MemoryByNode: map[int]uint64{1: 512 << 20}, Problems: []string{"CgroupWriteFailed: EBUSY"}},
			{Name: "web", QOSClass: "LS", Pool: "shared", CPUs: "6-31", NUMANodes: []int{0, 1}, PIDs: 4},
		},
		CPUBusy: map[int]float64{2: 1, 3: 0.8, 4: 0.5, 5: 0.2, 6: 0.3, 24: 0.1},
	}
}

// unequalHuge is two sockets of four CPUs: node 0 with 16 GiB, node 1 with
// 64 GiB and every huge page, 2 MiB and 1 GiB ones.
var unequalHuge = fixture.Shape{Name: "2s-4c-unequal-huge", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 1, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30,
	MemoryByNode: map[int]uint64{1: 64 << 30},
	HugePages: []fixture.NodeHugePages{
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 512}},
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 4, Free: 4}},
	}}

// hugeAgent is unequalHuge with an agent that accounts the memory it
// pinned: db on node 1 with 32 GiB, cache on node 0 with 20 GiB spilled
// to node 1; db has faulted in 128 of the 2 MiB pages and one 1 GiB page.
func hugeAgent() *Snapshot {
	return &Snapshot{Time: t0, Source: "agent 127.0.0.1:9316", Agent: true, Topology: fixture.MustBuild(unequalHuge),
		Pools: Pools{Exclusive: "0-1,4-5", Shared: "2-3,6-7"},
		Workloads: []Workload{
			{Name: "db", QOSClass: "LS", Pool: "exclusive", CPUs: "4-5", NUMANodes: []int{1}, MemNodes: []int{1}, PIDs: 1,
				MemoryByNode: map[int]uint64{1: 30 << 30}, MemoryHeldByNode: map[int]uint64{1: 32 << 30}},
			{Name: "cache", QOSClass: "LS", Pool: "exclusive", CPUs: "0-1", NUMANodes: []int{0}, MemNodes: []int{0, 1}, PIDs: 1,
				MemoryByNode: map[int]uint64{0: 10 << 30, 1: 2 << 30}, MemoryHeldByNode: map[int]uint64{0: 12 << 30, 1: 8 << 30}},
		},
		NodeMemory: map[int]NodeMemory{0: {Total: 16 << 30, Free: 4 << 30},
			1: {Total: 64 << 30, Free: 20 << 30, HugePages: []topology.HugePages{
				{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 384}, {SizeKiB: topology.HugePages1GiKiB, Total: 4, Free: 3}}}},
	}
}

package view

import (
	"time"

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

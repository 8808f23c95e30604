package sample

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/locus-project/locus/internal/testfs"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/view"
)

func TestParseNumaStat(t *testing.T) {
	cases := []struct {
		name, text string
		v1         bool
		want       map[int]uint64
		err        bool
	}{
		{"v2: anon and file", "anon N0=4096 N1=8192\nfile N0=1000 N1=0\nkernel_stack N0=16384 N1=0\nshmem N0=500 N1=0\n", false,
			map[int]uint64{0: 5096, 1: 8192}, false},
		{"v1: pages", "total=30 N0=10 N1=20\nfile=3 N0=1 N1=2\nanon=27 N0=9 N1=18\n", true,
			map[int]uint64{0: 40960, 1: 81920}, false},
		{"v1: hierarchical wins", "total=1 N0=1\nhierarchical_total=5 N0=2 N1=3\n", true,
			map[int]uint64{0: 8192, 1: 12288}, false},
		{"v2 without anon", "kernel_stack N0=1\n", false, nil, true},
		{"malformed", "anon N0=x\n", false, nil, true},
		{"not a node", "anon M0=1\n", false, nil, true},
	}
	for _, tc := range cases {
		got, err := parseNumaStat(tc.text, tc.v1, 4096)
		if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// The sampler measures rates between calls, at least MinInterval apart,
// and reads memory now; what it cannot read stays unknown.
func TestSamplerFill(t *testing.T) {
	dir := t.TempDir()
	proc, sys, cg := filepath.Join(dir, "proc"), filepath.Join(dir, "sys"), filepath.Join(dir, "cg")
	if err := fixture.WriteSysfs(fixture.Small4, sys); err != nil {
		t.Fatal(err)
	}
	testfs.Write(t, filepath.Join(sys, "devices/system/node/node0/meminfo"), "Node 0 MemTotal: 1000 kB\nNode 0 MemFree: 250 kB\n")
	testfs.Write(t, filepath.Join(sys, "devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages"), "8\n")
	testfs.Write(t, filepath.Join(sys, "devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages"), "3\n")
	testfs.Write(t, filepath.Join(cg, "cgroup.controllers"), "cpuset cpu memory\n")
	testfs.Write(t, filepath.Join(cg, "pods/web/memory.numa_stat"), "anon N0=3000\nfile N0=1000\n")
	h, err := cgroup.Open(cg, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(proc, sys, h)
	s.now = func() time.Time { return now }
	tick := func(cpu0Busy, cpu0Total, usageUsec int) view.Snapshot {
		testfs.Write(t, filepath.Join(proc, "stat"), fmt.Sprintf("cpu0 %d 0 0 %d 0\ncpu1 0 0 0 100 0\ncpu9 1 0 0 1 0\n", cpu0Busy, cpu0Total-cpu0Busy))
		testfs.Write(t, filepath.Join(cg, "pods/web/cpu.stat"), fmt.Sprintf("usage_usec %d\n", usageUsec))
		snap := view.Snapshot{Topology: fixture.MustBuild(fixture.Small4),
			Workloads: []view.Workload{{Name: "web", Cgroup: "pods/web"}, {Name: "gone", Cgroup: "pods/gone"}, {Name: "none"}}}
		s.Fill(&snap)
		return snap
	}
	first := tick(100, 1000, 0)
	if len(first.CPUBusy) != 0 || first.Workloads[0].CPUUsage != nil {
		t.Errorf("first sample has rates: %v, %v", first.CPUBusy, first.Workloads[0].CPUUsage)
	}
	if m := first.NodeMemory[0]; m.Total != 1000<<10 || m.Free != 250<<10 ||
		!reflect.DeepEqual(m.HugePages, []topology.HugePages{{SizeKiB: 2048, Total: 8, Free: 3}}) {
		t.Errorf("node memory %+v", first.NodeMemory)
	}
	if w := first.Workloads; !reflect.DeepEqual(w[0].MemoryByNode, map[int]uint64{0: 4000}) || w[1].MemoryByNode != nil || w[2].MemoryByNode != nil {
		t.Errorf("memory by node %v / %v / %v", w[0].MemoryByNode, w[1].MemoryByNode, w[2].MemoryByNode)
	}
	now = now.Add(2 * time.Second)
	second := tick(400, 2000, 500000) // cpu0: 300 busy of 1000; web: 0.5 s in 2 s
	if !reflect.DeepEqual(second.CPUBusy, map[int]float64{0: 0.3}) {
		t.Errorf("CPU busy %v, want CPU 0 at 30%% (CPU 1 did not move, CPU 9 is not in the topology)", second.CPUBusy)
	}
	if u := second.Workloads[0].CPUUsage; u == nil || *u != 0.25 {
		t.Errorf("web CPU usage %v, want 0.25 CPUs", u)
	}
	if second.Workloads[1].CPUUsage != nil || second.Workloads[2].CPUUsage != nil {
		t.Error("workloads without a readable cgroup got a CPU usage")
	}
	now = now.Add(MinInterval / 2)
	third := tick(2000, 2001, 9000000) // too soon: the last rates again
	if !reflect.DeepEqual(third.CPUBusy, second.CPUBusy) || *third.Workloads[0].CPUUsage != 0.25 {
		t.Errorf("a call within MinInterval measured again: %v, %v", third.CPUBusy, *third.Workloads[0].CPUUsage)
	}
}

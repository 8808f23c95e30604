package probe

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/testfs"
	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/cgroup"
)

func TestReaderOnFixtureTrees(t *testing.T) {
	dir := t.TempDir()
	proc, sys, cg := filepath.Join(dir, "proc"), filepath.Join(dir, "sys"), filepath.Join(dir, "cg")
	testfs.Write(t, filepath.Join(proc, "stat"), "cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\n")
	testfs.Write(t, filepath.Join(sys, "devices/system/node/node1/meminfo"),
		"Node 1 MemTotal:       1048576 kB\nNode 1 MemFree:         524288 kB\n")
	testfs.Write(t, filepath.Join(cg, "vm/cpu.stat"), "usage_usec 2500000\nuser_usec 2000000\n")
	testfs.Write(t, filepath.Join(cg, "vm/memory.numa_stat"), "anon N0=4096 N1=1048576\nfile N0=1 N1=1\n")
	testfs.Write(t, filepath.Join(cg, "vm/pids.current"), "7\n")
	testfs.Write(t, filepath.Join(cg, "vm/cpuset.cpus"), "2-3\n")
	testfs.Write(t, filepath.Join(cg, "bare/cpu.stat"), "usage_usec 10\n")
	testfs.Write(t, filepath.Join(cg, "bare/memory.numa_stat"), "anon N0=0\n")
	testfs.Write(t, filepath.Join(cg, "bare/cgroup.threads"), "11\n12\n")
	h, err := cgroup.Open(cg, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	r := Reader{ProcRoot: proc, SysfsRoot: sys, H: h}
	st, err := r.CPUStat()
	if err != nil || st[0].Busy != 2 || st[0].Total != 12 {
		t.Fatalf("CPUStat: %v %v", st, err)
	}
	mem, err := r.NodeMemory([]int{1})
	if err != nil || mem[1] != (balancer.NodeMemory{Total: 1 << 30, Free: 512 << 20}) {
		t.Fatalf("NodeMemory: %v %v", mem, err)
	}
	g, err := r.Group("vm")
	if err != nil {
		t.Fatal(err)
	}
	want := GroupSample{CPU: 2500 * time.Millisecond, Mem: map[int]uint64{0: 4096, 1: 1 << 20}, Threads: 7, CPUs: cpuset.New(2, 3)}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("Group(vm) = %+v, want %+v", g, want)
	}
	if g, err := r.Group("bare"); err != nil || g.Threads != 2 || !g.CPUs.IsEmpty() {
		t.Fatalf("Group(bare) = %+v, %v: want 2 threads from cgroup.threads, no cpuset", g, err)
	}
	if _, err := r.Group("missing"); err == nil {
		t.Fatal("a missing cgroup read fine")
	}
	if _, err := r.Group("../etc"); err == nil {
		t.Fatal("a path outside the root was read")
	}
}

func TestWindow(t *testing.T) {
	parts := []balancer.Partition{{Name: "node0", CPUs: cpuset.New(0)}, {Name: "node1", CPUs: cpuset.New(1)}}
	before := Sample{At: t0, CPUs: map[int]balancer.CPUTimes{0: {Busy: 0, Total: 0}, 1: {Busy: 0, Total: 0}},
		Groups: map[string]GroupSample{"a": {CPU: time.Second, CPUs: cpuset.New(0)}, "gone": {}}}
	after := Sample{At: t0.Add(2 * time.Second), CPUs: map[int]balancer.CPUTimes{0: {Busy: 150, Total: 200}, 1: {Busy: 0, Total: 200}},
		Groups: map[string]GroupSample{"a": {CPU: 4 * time.Second, Mem: map[int]uint64{0: 1}, Threads: 2, CPUs: cpuset.New(1)}, "new": {}}}
	ps, gs := Window(parts, before, after)
	if ps[0].Busy != 0.75 || ps[1].Busy != 0 || parts[0].Busy != 0 {
		t.Fatalf("busy %v %v (input changed: %v)", ps[0].Busy, ps[1].Busy, parts[0].Busy)
	}
	want := []balancer.Group{{Name: "a", CPU: 1.5, Mem: map[int]uint64{0: 1}, Threads: 2, Current: cpuset.New(1)}}
	if !reflect.DeepEqual(gs, want) {
		t.Fatalf("groups %+v, want %+v", gs, want)
	}
}

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// What a group's memory counts: anonymous and shared memory, not page
// cache; on v1 the subtree's.
func TestGroupMemory(t *testing.T) {
	v2 := "anon N0=4096 N1=8192\nfile N0=100 N1=0\nshmem N0=0 N1=4096\nkernel_stack N0=16384 N1=0\n"
	got, err := groupMemory(v2, false, 4096)
	if err != nil || !reflect.DeepEqual(got, map[int]uint64{0: 4096, 1: 12288}) {
		t.Fatalf("v2: %v %v", got, err)
	}
	v1 := "total=10 N0=6 N1=4\nfile=2 N0=2 N1=0\nanon=8 N0=4 N1=4\nhierarchical_total=30 N0=20 N1=10\nhierarchical_anon=20 N0=15 N1=5\n"
	got, err = groupMemory(v1, true, 4096)
	if err != nil || !reflect.DeepEqual(got, map[int]uint64{0: 15 * 4096, 1: 5 * 4096}) {
		t.Fatalf("v1 hierarchical: %v %v", got, err)
	}
	got, err = groupMemory("total=10 N0=6 N1=4\nanon=8 N0=4 N1=4\n", true, 4096)
	if err != nil || !reflect.DeepEqual(got, map[int]uint64{0: 4 * 4096, 1: 4 * 4096}) {
		t.Fatalf("v1 flat: %v %v", got, err)
	}
	for _, bad := range []string{"file N0=1\n", "anon N0=x\n", "anon 0=1\n"} {
		if _, err := groupMemory(bad, false, 4096); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

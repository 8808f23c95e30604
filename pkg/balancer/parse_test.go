package balancer

import (
	"reflect"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestParseProcStatAndBusy(t *testing.T) {
	before, err := ParseProcStat("cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 0 5 50 0 0 0 0 0 0\ncpu1 5 0 5 50 0 0 0 0 0 0\nintr 1 2\n")
	if err != nil {
		t.Fatal(err)
	}
	// cpu0: 95 busy of 105 ticks; cpu1: 10 of 90, with iowait as idle;
	// cpu2 appears (came online): idle.
	after, err := ParseProcStat("cpu0 65 10 15 60 0 5 5 5 7 0\ncpu1 10 0 10 90 40 0 0 0 0 0\ncpu2 1 0 0 1\n")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "cpu0 busy", after[0].Busy, uint64(105))
	mustEqual(t, "cpu0 total", after[0].Total, uint64(165))
	parts := []Partition{{Name: "a", CPUs: cpuset.New(0, 1)}, {Name: "b", CPUs: cpuset.New(2)}}
	SetBusy(parts, before, after)
	mustEqual(t, "a busy", parts[0].Busy, 95.0/105+10.0/90)
	mustEqual(t, "b busy", parts[1].Busy, 0.0)
	for _, bad := range []string{"", "cpu0 1 2 x 4\n", "cpuX 1 2 3 4\n", "cpu0 1 2\n"} {
		if _, err := ParseProcStat(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseNumaStat(t *testing.T) {
	v2 := "anon N0=4096 N1=8192\nfile N0=100 N1=0\nshmem N0=0 N1=4096\nkernel_stack N0=16384 N1=0\n"
	got, err := ParseNumaStat(v2, false, 4096)
	if err != nil || !reflect.DeepEqual(got, map[int]uint64{0: 4096, 1: 12288}) {
		t.Fatalf("v2: %v %v", got, err)
	}
	v1 := "total=10 N0=6 N1=4\nfile=2 N0=2 N1=0\nanon=8 N0=4 N1=4\nhierarchical_total=30 N0=20 N1=10\nhierarchical_anon=20 N0=15 N1=5\n"
	got, err = ParseNumaStat(v1, true, 4096)
	if err != nil || !reflect.DeepEqual(got, map[int]uint64{0: 15 * 4096, 1: 5 * 4096}) {
		t.Fatalf("v1 hierarchical: %v %v", got, err)
	}
	got, err = ParseNumaStat("total=10 N0=6 N1=4\nanon=8 N0=4 N1=4\n", true, 4096)
	if err != nil || !reflect.DeepEqual(got, map[int]uint64{0: 4 * 4096, 1: 4 * 4096}) {
		t.Fatalf("v1 flat: %v %v", got, err)
	}
	for _, bad := range []string{"file N0=1\n", "anon N0=x\n", "anon 0=1\n"} {
		if _, err := ParseNumaStat(bad, false, 4096); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestPartitionsByNodeAndL3(t *testing.T) {
	shape := fixture.Shape{Name: "t", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 2, CoresPerSocket: 4, ThreadsPerCore: 1,
		Siblings: fixture.SiblingsSplit, MemoryPerNode: 1 << 30}
	topo, err := fixture.Build(shape)
	if err != nil {
		t.Fatal(err)
	}
	pool := topo.CPUSet().Difference(cpuset.New(0, 5)) // reserved and exclusive CPUs
	var got []string
	for _, p := range Partitions(topo, ByNUMA, pool) {
		got = append(got, p.Name+"="+p.CPUs.String())
	}
	mustEqual(t, "by node", reflect.DeepEqual(got, []string{"node0=1-3", "node1=4,6-7"}), true)
	got = nil
	for _, p := range Partitions(topo, ByL3, pool) {
		got = append(got, p.Name+"="+p.CPUs.String()+"@"+string(rune('0'+p.Nodes[0])))
	}
	if !reflect.DeepEqual(got, []string{"l3-0=1@0", "l3-1=2-3@0", "l3-2=4@1", "l3-3=6-7@1"}) {
		t.Fatalf("by l3: %v", got)
	}
	if k, err := ParseKind(" L3 "); err != nil || k != ByL3 {
		t.Fatalf("ParseKind: %v %v", k, err)
	}
	if _, err := ParseKind("socket"); err == nil {
		t.Fatal("socket accepted")
	}
}

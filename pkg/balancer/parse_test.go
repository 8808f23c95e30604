package balancer

import (
	"reflect"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestSetBusy(t *testing.T) {
	before, err := procfs.ParseCPUTimes("cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 0 5 50 0 0 0 0 0 0\ncpu1 5 0 5 50 0 0 0 0 0 0\nintr 1 2\n")
	if err != nil {
		t.Fatal(err)
	}
	// cpu0: 95 busy of 105 ticks; cpu1: 10 of 90, with iowait as idle;
	// cpu2 appears (came online): idle.
	after, err := procfs.ParseCPUTimes("cpu0 65 10 15 60 0 5 5 5 7 0\ncpu1 10 0 10 90 40 0 0 0 0 0\ncpu2 1 0 0 1\n")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "cpu0 busy", after[0].Busy, uint64(105))
	mustEqual(t, "cpu0 total", after[0].Total, uint64(165))
	parts := []Partition{{Name: "a", CPUs: cpuset.New(0, 1)}, {Name: "b", CPUs: cpuset.New(2)}}
	SetBusy(parts, before, after)
	mustEqual(t, "a busy", parts[0].Busy, 95.0/105+10.0/90)
	mustEqual(t, "b busy", parts[1].Busy, 0.0)
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

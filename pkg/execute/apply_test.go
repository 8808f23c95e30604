package execute

import (
	"reflect"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

func TestBatchesSplitIndependentSubtrees(t *testing.T) {
	op := func(cg string) cgroup.Op { return cgroup.Op{Cgroup: cg, Knob: cgroup.CPUSetCPUs, Value: "0"} }
	bs := batches([]cgroup.Op{op("a/x"), op("a"), op("a-b"), op("c/d"), op("a/x/y")},
		[]cgroup.Target{{Cgroup: "c", Knob: cgroup.MemoryLow}, {Cgroup: "e", Knob: cgroup.MemoryLow}})
	var got [][]string
	for _, b := range bs {
		got = append(got, b.cgroups)
	}
	want := [][]string{{"a", "a/x", "a/x/y"}, {"a-b"}, {"c", "c/d"}, {"e"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batches = %v, want %v", got, want)
	}
	if len(bs[2].ops) != 1 || len(bs[2].restores) != 1 {
		t.Errorf("c's batch has %d ops and %d restores, want 1 and 1", len(bs[2].ops), len(bs[2].restores))
	}
}

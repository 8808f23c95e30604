package decide

import (
	"fmt"
	"testing"

	"github.com/locus-project/locus/pkg/cgroupfile"
)

// BenchmarkReadyWrites is the executor's take of a decision's files: 300
// pods, each with a container, four cpuset and memory files each, every
// cgroup prepared (the common case), and a restore per pod.
func BenchmarkReadyWrites(b *testing.B) {
	r := Ready{prepared: map[string]bool{}}
	for i := range 300 {
		pod := fmt.Sprintf("kubepods/pod%03d", i)
		for _, cg := range []string{pod, pod + "/c"} {
			r.prepared[cg] = true
			for _, k := range []cgroupfile.Knob{cgroupfile.CPUSetCPUs, cgroupfile.CPUSetMems} {
				r.Desired.Ops = append(r.Desired.Ops, cgroupfile.Op{Cgroup: cg, Knob: k, Value: "0-3"})
			}
		}
		r.Desired.Restores = append(r.Desired.Restores, cgroupfile.Target{Cgroup: pod, Knob: cgroupfile.CPUIdle})
	}
	b.ReportAllocs()
	for b.Loop() {
		ops, restores := r.Writes()
		if len(ops) != 1200 || len(restores) != 300 {
			b.Fatalf("%d ops, %d restores", len(ops), len(restores))
		}
	}
}

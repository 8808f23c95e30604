package decide

import (
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// The cpuset ops whose value is a shared pool's say which pool
// (cgroupfile.Op.Pool), so a pool's move can be told apart from a workload's
// own change; CPUs of a workload's own, a container's part and every other
// knob carry no pool.
func TestComputeMarksPoolOps(t *testing.T) {
	plain := workload.Workload{Name: "a/plain", Cgroup: "kubepods/poda", UID: "a",
		Containers: []workload.Container{{Name: "app", Cgroup: "kubepods/poda/app"}},
		Unlisted:   []string{"kubepods/poda/new"}, OwnsMemoryLimit: true, MemoryLimit: 1 << 30}
	be := workload.Workload{Name: "b/be", Cgroup: "kubepods/podb", UID: "b", BE: true,
		Containers: []workload.Container{{Name: "app", Cgroup: "kubepods/podb/app"}}}
	pinned := workload.Workload{Name: "c/pinned", Cgroup: "kubepods/podc", UID: "c",
		Containers: []workload.Container{{Name: "app", Cgroup: "kubepods/podc/app"}},
		CPU:        workload.CPUNeed{Exclusive: true, CPUs: 2, Policy: cpualloc.FullPCPUsThenThreads}}
	scope := scoped(true, nil)
	d := Compute(Input{Topology: fixture.MustBuild(fixture.Intel2S96C), Reserved: cpuset.New(0),
		Workloads: []workload.Workload{plain, be, pinned, scope}})
	want := map[string]string{
		"kubepods/poda/app": "shared", "kubepods/poda/new": "shared",
		"kubepods/podb/app": "be",
		"kubepods/podc/app": "",
		"kubepods/podu/log": "", "kubepods/podu/web": "", "kubepods/podu/cache": "",
	}
	seen := map[string]int{}
	cpusetOps, others := 0, 0
	for _, op := range d.Ops {
		if op.Knob != cgroupfile.CPUSetCPUs && op.Knob != cgroupfile.CPUSetMems {
			others++
			if op.Pool != "" {
				t.Errorf("%s %s marked as pool %q", op.Cgroup, op.Knob, op.Pool)
			}
			continue
		}
		cpusetOps++
		w, ok := want[op.Cgroup]
		if !ok {
			t.Errorf("unexpected cpuset op %+v", op)
			continue
		}
		seen[op.Cgroup]++
		if op.Pool != w {
			t.Errorf("%s %s: pool %q, want %q", op.Cgroup, op.Knob, op.Pool, w)
		}
	}
	for cg := range want {
		if seen[cg] != 2 {
			t.Errorf("%s: %d cpuset ops, want cpus and mems", cg, seen[cg])
		}
	}
	if others == 0 {
		t.Error("no memory limit op: the test does not check that other knobs go unmarked")
	}
	if p := d.Unlisted["kubepods/poda"]; p.Pool != "shared" {
		t.Errorf("Unlisted of the shared pod: %+v, want pool shared", p)
	}
}

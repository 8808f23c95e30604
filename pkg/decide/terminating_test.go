package decide

import (
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// A terminating workload keeps its CPUs until it is gone, so a newcomer
// cannot get them while its processes may still run, and nothing is written
// for it: no cpuset, no memory QoS file, no restore.
func TestComputeTerminatingKeepsCPUsWritesNothing(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	auto := map[string]string{"koordinator.sh/memoryQOS": `{"policy":"auto","lowLimitPercent":100}`}
	old := testWorkload("old", 2, true, false, auto)
	in := Input{Topology: topo, Reserved: cpuset.New(), BEPool: cpuset.New(), Workloads: []workload.Workload{old}}
	held := Compute(in).Assignments["old"].CPUs
	if held.Size() != 2 {
		t.Fatalf("old got %s", held)
	}

	old.Terminating = true
	in.Previous = Compute(in).Assignments
	// The newcomer needs one of the held CPUs: it waits.
	want := topo.CPUSet().Size() - 1
	in.Workloads = []workload.Workload{old, testWorkload("new", want, true, false, nil), testWorkload("web", 0, false, false, auto)}
	d := Compute(in)
	if !d.Assignments["old"].CPUs.Equals(held) {
		t.Fatalf("terminating workload lost its CPUs: %v", d.Assignments)
	}
	if got, ok := d.Assignments["new"]; ok {
		t.Fatalf("new got %s while the terminating workload holds %s", got.CPUs, held)
	}
	for _, op := range d.Ops {
		if op.Cgroup == old.Cgroup {
			t.Errorf("op for the terminating workload: %+v", op)
		}
	}
	for _, r := range d.Restores {
		if r.Cgroup == old.Cgroup {
			t.Errorf("restore for the terminating workload: %+v", r)
		}
	}
	if _, ok := opValue(d.Ops, "locus.slice/web", "memory.low"); !ok {
		t.Error("the other workloads are still written")
	}
	for _, st := range d.Workloads {
		if st.Name == "old" && (st.Pool != "exclusive" || st.CPUs != held.String() || st.MemQoSOn) {
			t.Errorf("status of the terminating workload: %+v", st)
		}
	}
	// Once it is gone the CPUs are free again.
	in.Previous, in.Workloads = d.Assignments, in.Workloads[1:]
	if d = Compute(in); d.Assignments["new"].CPUs.Size() != want {
		t.Errorf("after the terminating workload left, new got %s", d.Assignments["new"].CPUs)
	}
}

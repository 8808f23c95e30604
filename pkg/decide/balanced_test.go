package decide

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/topology"
)

// node1 is the CPUs of NUMA node 1 on the observation's machine.
func node1(t *topology.Topology) cpuset.CPUSet {
	return t.CPUsWhere(func(c topology.CPU) bool { return c.NUMA == 1 })
}

// The balancer's placements are an input of the decision: a workload of
// the shared or BE pool gets its partition's CPUs in its pool, with its
// pool's mems widened until its memory is home; a workload with CPUs of
// its own, a terminating one and one whose partition left its pool keep
// the decision's values.
func TestDecideBalancedWorkloads(t *testing.T) {
	web := testWorkload("web", 0, false, false, nil)
	batch := testWorkload("batch", 0, false, true, nil)
	redis := testWorkload("redis", 4, true, false, nil)
	gone := testWorkload("gone", 0, false, false, nil)
	gone.Terminating = true
	obs := testObservation(web, batch, redis, gone)
	n1 := node1(obs.Topology)
	plain := Decide(obs, Memory{})
	obs.Balanced = Balanced{Workloads: map[string]Placement{
		"web":   {CPUs: n1, Nodes: []int{1}},
		"batch": {CPUs: n1, Nodes: []int{1}, Home: true},
		"redis": {CPUs: n1, Nodes: []int{1}},
		"gone":  {CPUs: n1, Nodes: []int{1}},
	}}
	r := Decide(obs, Memory{})
	shared := r.Desired.Pools.Shared
	ops, _ := r.Writes()
	for _, c := range []struct{ cg, cpus, mems string }{
		{"locus.slice/web", n1.Intersection(shared).String(), "0-1"},
		{"locus.slice/batch", n1.Intersection(r.Desired.Pools.BE).String(), "1"},
	} {
		if got, _ := opValue(ops, c.cg, cgroupfile.CPUSetCPUs); got != c.cpus {
			t.Errorf("%s cpuset.cpus %q, want %q", c.cg, got, c.cpus)
		}
		if got, _ := opValue(ops, c.cg, cgroupfile.CPUSetMems); got != c.mems {
			t.Errorf("%s cpuset.mems %q, want %q", c.cg, got, c.mems)
		}
		if got := r.Desired.Balanced[c.cg]; got.CPUs != c.cpus || got.Mems != c.mems {
			t.Errorf("Balanced[%s] = %+v", c.cg, got)
		}
	}
	for _, st := range r.Desired.Workloads {
		if st.Name == "web" && (st.CPUs != n1.Intersection(shared).String() || st.Mems != "0-1" || !slices.Equal(st.NUMANodes, []int{1})) {
			t.Errorf("web's state %+v: want its placement", st)
		}
	}
	for _, cg := range []string{"locus.slice/redis", "locus.slice/gone"} {
		want, _ := opValue(plain.Desired.Ops, cg, cgroupfile.CPUSetCPUs)
		if got, _ := opValue(r.Desired.Ops, cg, cgroupfile.CPUSetCPUs); got != want {
			t.Errorf("%s cpuset.cpus %q, want the decision's %q", cg, got, want)
		}
		if _, ok := r.Desired.Balanced[cg]; ok {
			t.Errorf("%s balanced", cg)
		}
	}
	// The placements are never kept in the decision reused while its input
	// holds: without them the next decision is the plain one.
	obs.Balanced = Balanced{}
	if again := Decide(obs, r.Memory); !reflect.DeepEqual(again.Desired.Ops, plain.Desired.Ops) || again.Desired.Balanced != nil {
		t.Error("the placements stayed in the decision reused")
	}
	// A partition that left the pool places nothing.
	obs.Balanced = Balanced{Workloads: map[string]Placement{"web": {CPUs: cpuset.New(0), Nodes: []int{0}}}}
	if r := Decide(obs, Memory{}); !reflect.DeepEqual(r.Desired.Ops, plain.Desired.Ops) {
		t.Error("a placement outside the pool changed the decision")
	}
}

// The cgroups the balancer names that are no workload's are written and
// restored through the decision: placed, they get their partition's CPUs;
// not placed, the shared pool; released, their originals. They count as
// prepared.
func TestDecideBalancedCgroups(t *testing.T) {
	obs := testObservation(testWorkload("web", 0, false, false, nil))
	n1 := node1(obs.Topology)
	obs.Balanced = Balanced{Cgroups: map[string]Placement{
		"vms/vm1": {CPUs: n1, Nodes: []int{1}, Home: true},
		"vms/vm2": {},
	}, Released: []string{"vms/vm3"}}
	r := Decide(obs, Memory{})
	shared := r.Desired.Pools.Shared
	ops, restores := r.Writes()
	want := []cgroupfile.Op{
		{Cgroup: "vms/vm1", Knob: cgroupfile.CPUSetMems, Value: "1"},
		{Cgroup: "vms/vm1", Knob: cgroupfile.CPUSetCPUs, Value: n1.Intersection(shared).String()},
		{Cgroup: "vms/vm2", Knob: cgroupfile.CPUSetMems, Value: "0-1"},
		{Cgroup: "vms/vm2", Knob: cgroupfile.CPUSetCPUs, Value: shared.String()},
	}
	var got []cgroupfile.Op
	for _, op := range ops {
		if op.Cgroup != "locus.slice/web" {
			got = append(got, op)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ops %+v, want %+v", got, want)
	}
	wantRestores := []cgroupfile.Target{{Cgroup: "vms/vm3", Knob: cgroupfile.CPUSetCPUs}, {Cgroup: "vms/vm3", Knob: cgroupfile.CPUSetMems}}
	var gotRestores []cgroupfile.Target
	for _, t := range restores {
		if t.Cgroup == "vms/vm3" {
			gotRestores = append(gotRestores, t)
		}
	}
	if !reflect.DeepEqual(gotRestores, wantRestores) {
		t.Errorf("restores %+v, want %+v", gotRestores, wantRestores)
	}
	if r.Desired.Balanced["vms/vm2"].Pool != "shared" || r.Desired.Balanced["vms/vm1"].Pool != "" || !slices.Equal(r.Desired.Released, []string{"vms/vm3"}) {
		t.Errorf("Balanced %+v, Released %v", r.Desired.Balanced, r.Desired.Released)
	}
	if obs.Prepared["vms/vm1"] {
		t.Error("the observation's prepared cgroups were changed")
	}
}

func TestPlacedMems(t *testing.T) {
	for _, c := range []struct {
		mems  string
		nodes []int
		home  bool
		want  string
	}{{"0", []int{1}, false, "0-1"}, {"", []int{1}, false, "1"}, {"0-1", []int{0}, false, "0-1"},
		{"bad", []int{0}, false, "0"}, {"0-1", []int{1}, true, "1"}} {
		if got := placedMems(c.mems, Placement{Nodes: c.nodes, Home: c.home}); got != c.want {
			t.Errorf("placedMems(%q, %v, home %v) = %q, want %q", c.mems, c.nodes, c.home, got, c.want)
		}
	}
}

package decide

import (
	"reflect"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

func testObservation(ws ...workload.Workload) Observation {
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(0, 96), BEPool: cpuset.New()}
	obs := Observation{Topology: fixture.MustBuild(fixture.Intel2S96C), Config: cfg, Workloads: ws, Prepared: map[string]bool{}}
	for _, w := range ws {
		obs.Prepared[w.Cgroup] = true
	}
	return obs
}

func reasons(es []eventlog.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Reason+" "+e.Workload)
	}
	return out
}

func TestDecide(t *testing.T) {
	redis := testWorkload("redis", 4, true, false, nil)
	web := testWorkload("web", 0, false, false, nil)
	held := cpuset.New(2, 3, 4, 5)
	for _, tc := range []struct {
		name             string
		obs              func() Observation
		mem              Memory
		events, warnings []string
		save             bool
		writes           func(t *testing.T, ops []cgroupfile.Op)
	}{{
		name:   "first decision: CPUs assigned, saved",
		obs:    func() Observation { return testObservation(redis, web) },
		events: []string{"CPUsAssigned redis"}, save: true,
	}, {
		name: "assignments in force: nothing told, nothing saved",
		obs:  func() Observation { return testObservation(redis, web) },
		mem:  Memory{Assignments: map[string]workload.Assignment{"redis": {CPUs: held, Policy: redis.CPU.Policy}}},
	}, {
		name:   "a workload gone: CPUs released",
		obs:    func() Observation { return testObservation(web) },
		mem:    Memory{Assignments: map[string]workload.Assignment{"redis": {CPUs: held, Policy: redis.CPU.Policy}}},
		events: []string{"CPUsReleased redis"}, save: true,
	}, {
		name: "a lease dropped: told, saved",
		obs: func() Observation {
			o := testObservation(web)
			o.Dropped = map[string]Lease{"run-1": {Cgroup: "locus.slice/run-1"}}
			return o
		},
		events: []string{"LeaseDropped "}, save: true,
	}, {
		name: "a problem observed: warned",
		obs: func() Observation {
			o := testObservation(web)
			o.Problems = []workload.Problem{{Workload: "web", Reason: "CgroupMissing", Message: "no cgroup"}}
			return o
		},
		warnings: []string{"CgroupMissing web"},
	}, {
		name: "a problem told already: not again",
		obs: func() Observation {
			o := testObservation(web)
			o.Problems = []workload.Problem{{Workload: "web", Reason: "CgroupMissing", Message: "no cgroup"}}
			return o
		},
		mem: Memory{Problems: map[string]bool{"web\x00CgroupMissing\x00no cgroup": true}},
	}, {
		name: "a cgroup not prepared: not written",
		obs: func() Observation {
			o := testObservation(web)
			o.Prepared = map[string]bool{}
			return o
		},
		writes: func(t *testing.T, ops []cgroupfile.Op) {
			if len(ops) != 0 {
				t.Errorf("writes %v to a cgroup not prepared", ops)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := Decide(tc.obs(), tc.mem)
			if got := reasons(r.Events); !reflect.DeepEqual(got, tc.events) {
				t.Errorf("events %q, want %q", got, tc.events)
			}
			if got := reasons(r.Warnings); !reflect.DeepEqual(got, tc.warnings) {
				t.Errorf("warnings %q, want %q", got, tc.warnings)
			}
			if r.Save != tc.save {
				t.Errorf("save = %v, want %v", r.Save, tc.save)
			}
			if tc.writes != nil {
				ops, _ := r.Writes()
				tc.writes(t, ops)
			}
		})
	}
}

// Writes keeps the ops and restores of prepared cgroups only, in order,
// whether or not the first ones are dropped; a list it hands back whole
// still cannot be appended to over the decision's own.
func TestWritesKeepsPreparedOnlyAndSharesNothingWritable(t *testing.T) {
	op := func(cg string) cgroupfile.Op {
		return cgroupfile.Op{Cgroup: cg, Knob: cgroupfile.CPUSetCPUs, Value: "1"}
	}
	tg := func(cg string) cgroupfile.Target { return cgroupfile.Target{Cgroup: cg, Knob: cgroupfile.CPUSetMems} }
	for _, tc := range []struct {
		name     string
		prepared []string
		wantOps  []string
	}{
		{"all", []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"first dropped", []string{"b", "c"}, []string{"b", "c"}},
		{"middle dropped", []string{"a", "c"}, []string{"a", "c"}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Ready{prepared: map[string]bool{}}
			for _, cg := range tc.prepared {
				r.prepared[cg] = true
			}
			r.Desired.Ops = append(make([]cgroupfile.Op, 0, 8), op("a"), op("b"), op("c")) // room to append over
			r.Desired.Restores = []cgroupfile.Target{tg("a"), tg("b"), tg("c")}
			ops, restores := r.Writes()
			var gotOps, gotRestores []string
			for _, o := range ops {
				gotOps = append(gotOps, o.Cgroup)
			}
			for _, x := range restores {
				gotRestores = append(gotRestores, x.Cgroup)
			}
			if !reflect.DeepEqual(gotOps, tc.wantOps) || !reflect.DeepEqual(gotRestores, tc.wantOps) {
				t.Fatalf("ops %v, restores %v; want %v for both", gotOps, gotRestores, tc.wantOps)
			}
			full := r.Desired.Ops[:cap(r.Desired.Ops)]
			_ = append(ops, op("x"))
			_ = append(restores, tg("x"))
			if full[3].Cgroup == "x" {
				t.Fatal("an append to Writes' ops wrote into the decision's")
			}
		})
	}
}

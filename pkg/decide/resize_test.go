package decide

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// resizeShape: two sockets of one node, two L3 groups each, two cores per
// L3, two adjacent threads per core: node 0 is CPUs 0-7 (L3 0-3, 4-7),
// node 1 CPUs 8-15; core c is CPUs 2c and 2c+1.
var resizeShape = fixture.Shape{Name: "2s-2l3-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 2, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 1 << 30}

// A workload whose CPU count changes keeps the CPUs it holds: it grows
// around them, shrinks inside them, and a decided one starts from its
// decision and then keeps the set resized from it.
func TestAssignResizesInPlace(t *testing.T) {
	set := func(s string) cpuset.CPUSet {
		c, err := cpuset.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	dflt := cpualloc.FullPCPUsThenThreads
	for _, tc := range []struct {
		name     string
		needs    map[string]workload.CPUNeed
		prev     map[string]workload.Assignment
		want     map[string]string // CPUs by workload
		decided  map[string]string // Assignment.Decided by workload, when set
		problems string            // "workload reason", joined by ";"
	}{
		{name: "grow keeps its CPUs and its L3 group",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 4, Policy: dflt}, "b": {Exclusive: true, CPUs: 2, Policy: dflt}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("2-3"), Policy: dflt}, "b": {CPUs: set("4-5"), Policy: dflt}},
			want:  map[string]string{"a": "0-3", "b": "4-5"}},
		{name: "shrink releases whole cores, keeping the rest",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 2, Policy: dflt}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("4-7"), Policy: dflt}},
			want:  map[string]string{"a": "4-5"}},
		{name: "a shrink frees CPUs for a grow",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 6, Policy: dflt}, "b": {Exclusive: true, CPUs: 2, Policy: dflt}},
			prev: map[string]workload.Assignment{"a": {CPUs: set("0-3"), Policy: dflt}, "b": {CPUs: set("4-7"), Policy: dflt},
				"c": {CPUs: set("8-15"), Policy: dflt}},
			want: map[string]string{"a": "0-3,6-7", "b": "4-5"}},
		{name: "a grow that does not fit keeps the old set",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 4, Policy: dflt}, "b": {Exclusive: true, CPUs: 14, Policy: dflt}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("0-1"), Policy: dflt}, "b": {CPUs: set("2-15"), Policy: dflt}},
			want:  map[string]string{"a": "0-1", "b": "2-15"}, problems: "a ResizeInfeasible"},
		{name: "a grow routes around new decisions",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 4, Policy: dflt},
				"z": {Exclusive: true, CPUs: 2, Policy: dflt, Decided: set("0-1")}},
			prev: map[string]workload.Assignment{"a": {CPUs: set("2-3"), Policy: dflt}},
			want: map[string]string{"a": "2-5", "z": "0-1"}},
		{name: "a decided workload resized before it was seen starts from its decision",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 4, Policy: dflt, Decided: set("8-9")}},
			want:  map[string]string{"a": "8-11"}, decided: map[string]string{"a": "8-9"}},
		{name: "a decided workload grows from its decision in force",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 4, Policy: dflt, Decided: set("8-9")}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("8-9"), Policy: dflt}},
			want:  map[string]string{"a": "8-11"}, decided: map[string]string{"a": "8-9"}},
		{name: "a decided workload keeps the set resized from its decision",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 4, Policy: dflt, Decided: set("8-9")}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("8-9,12-13"), Policy: dflt, Decided: set("8-9")}},
			want:  map[string]string{"a": "8-9,12-13"}, decided: map[string]string{"a": "8-9"}},
		{name: "back to its decision's count, the set in force still wins",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 2, Policy: dflt, Decided: set("8-9")}, "b": {Exclusive: true, CPUs: 2, Policy: dflt}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("10-11"), Policy: dflt, Decided: set("8-9")}, "b": {CPUs: set("8-9"), Policy: dflt}},
			want:  map[string]string{"a": "10-11", "b": "8-9"}, decided: map[string]string{"a": "8-9"}},
		{name: "a set not resized from the decision gives way to it",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 2, Policy: dflt, Decided: set("8-9")}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("0,2"), Policy: dflt}},
			want:  map[string]string{"a": "8-9"}},
		{name: "full-pcpus grows by whole cores",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 4, Policy: cpualloc.FullPCPUs}, "b": {Exclusive: true, CPUs: 1, Policy: dflt}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("0-1"), Policy: cpualloc.FullPCPUs}, "b": {CPUs: set("2"), Policy: dflt}},
			want:  map[string]string{"a": "0-1,4-5", "b": "2"}},
		{name: "a static-burst workload is chosen again",
			needs: map[string]workload.CPUNeed{"a": {Exclusive: true, CPUs: 3, Policy: cpualloc.StaticBurst, RequestMilli: 1000}},
			prev:  map[string]workload.Assignment{"a": {CPUs: set("14-15"), Policy: cpualloc.StaticBurst, RequestMilli: 1000}},
			want:  map[string]string{"a": "0-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := fixture.MustBuild(resizeShape)
			out, problems := Assign(topo, cpuset.New(), Kubelet{}, tc.needs, tc.prev)
			got := map[string]string{}
			for name, a := range out {
				got[name] = a.CPUs.String()
				if want := tc.decided[name]; a.Decided.String() != want {
					t.Errorf("%s: decided %q, want %q", name, a.Decided.String(), want)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("cpus = %v, want %v (problems %v)", got, tc.want, problems)
			}
			var ps []string
			for _, p := range problems {
				ps = append(ps, p.Workload+" "+p.Reason)
			}
			if strings.Join(ps, ";") != tc.problems {
				t.Fatalf("problems = %v, want %q", problems, tc.problems)
			}
			// Idempotent: deciding again on the result changes nothing.
			again, _ := Assign(topo, cpuset.New(), Kubelet{}, tc.needs, out)
			if !SameAssignments(out, again) {
				t.Fatalf("deciding again: %v, then %v", out, again)
			}
		})
	}
}

// A grow that does not fit is told once, as a Warning naming the CPUs
// asked and free, and applies as soon as the CPUs are free.
func TestDecideResizeInfeasibleToldOnce(t *testing.T) {
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New()}
	obs := Observation{Topology: fixture.MustBuild(resizeShape), Config: cfg, Prepared: map[string]bool{}}
	a := testWorkload("a", 2, true, false, nil)
	b := testWorkload("b", 12, true, false, nil)
	obs.Workloads = []workload.Workload{a, b}
	for _, w := range obs.Workloads {
		obs.Prepared[w.Cgroup] = true
	}
	r := Decide(obs, Memory{})
	held := r.Desired.Assignments["a"].CPUs
	// Workloads change with their configuration: a new one each time.
	changed := func(ws ...workload.Workload) {
		c := *obs.Config
		obs.Config, obs.Workloads = &c, ws
	}
	a.CPU.CPUs = 6
	changed(a, b)
	r = Decide(obs, r.Memory)
	if !r.Desired.Assignments["a"].CPUs.Equals(held) || r.Save {
		t.Fatalf("a moved to %s (save %v), want %s kept", r.Desired.Assignments["a"].CPUs, r.Save, held)
	}
	want := fmt.Sprintf("resize to 6 CPUs does not fit: full-pcpus: 4 more CPUs asked beside %s, 2 free; CPUs %s are kept until it does", held, held)
	if len(r.Warnings) != 1 || r.Warnings[0].Reason != "ResizeInfeasible" || r.Warnings[0].Message != want {
		t.Fatalf("warnings = %v, want one ResizeInfeasible %q", r.Warnings, want)
	}
	if len(r.Problems) != 1 || r.Problems[0].Reason != "ResizeInfeasible" {
		t.Fatalf("problems = %v, want the ResizeInfeasible one for status", r.Problems)
	}
	r = Decide(obs, r.Memory)
	if len(r.Warnings) != 0 {
		t.Fatalf("told again: %v", r.Warnings)
	}
	// b leaves: the grow applies, keeping a's CPUs.
	changed(a)
	r = Decide(obs, r.Memory)
	got := r.Desired.Assignments["a"].CPUs
	if got.Size() != 6 || !held.IsSubsetOf(got) || !r.Save || len(r.Problems) != 0 {
		t.Fatalf("after b left: a has %s (save %v, problems %v), want 6 CPUs keeping %s", got, r.Save, r.Problems, held)
	}
	if reasons(r.Events)[0] != "CPUsAssigned a" {
		t.Fatalf("events = %v", reasons(r.Events))
	}
}

// TestResizeProperties: on random nodes whose exclusive workloads then
// change their counts, a resize never gives a CPU two exclusive owners,
// every resized set keeps its CPUs (a grow holds all it held, a shrink only
// CPUs it held), one that cannot grow keeps its set and says so, and
// deciding again changes nothing.
func TestResizeProperties(t *testing.T) {
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 0x3f))
		in := randomInput(rng)
		d := Compute(in)
		for i, w := range in.Workloads {
			if w.CPU.Exclusive && w.CPU.Policy != cpualloc.StaticBurst && rng.IntN(2) == 0 {
				w.CPU.CPUs = 1 + rng.IntN(24)
				if w.CPU.Policy == cpualloc.FullPCPUs {
					w.CPU.CPUs += w.CPU.CPUs % 2
				}
				in.Workloads[i] = w
			}
		}
		in.Previous = d.Assignments
		r := Compute(in)
		infeasible := map[string]bool{}
		for _, p := range r.Problems {
			infeasible[p.Workload] = infeasible[p.Workload] || p.Reason == ReasonResizeInfeasible
		}
		for _, w := range in.Workloads {
			old, had := d.Assignments[w.Name]
			now, has := r.Assignments[w.Name]
			if !had || !w.CPU.Exclusive || w.CPU.Policy == cpualloc.StaticBurst {
				continue
			}
			switch {
			case !has:
				t.Fatalf("seed %d: %s lost its CPUs %s", seed, w.Name, old.CPUs)
			case infeasible[w.Name]:
				if !now.CPUs.Equals(old.CPUs) {
					t.Fatalf("seed %d: %s could not grow but moved from %s to %s", seed, w.Name, old.CPUs, now.CPUs)
				}
			case now.CPUs.Size() != w.CPU.CPUs:
				t.Fatalf("seed %d: %s has %s, want %d CPUs", seed, w.Name, now.CPUs, w.CPU.CPUs)
			case !old.CPUs.IsSubsetOf(now.CPUs) && !now.CPUs.IsSubsetOf(old.CPUs):
				t.Fatalf("seed %d: %s resized from %s to %s, moving CPUs", seed, w.Name, old.CPUs, now.CPUs)
			}
		}
		owner := map[int]string{}
		for name, a := range r.Assignments {
			for _, c := range a.CPUs.UnsortedList() {
				if prev, ok := owner[c]; ok && (a.Policy != cpualloc.StaticBurst || r.Assignments[prev].Policy != cpualloc.StaticBurst) {
					t.Fatalf("seed %d: CPU %d given to %s and %s", seed, c, prev, name)
				}
				owner[c] = name
			}
		}
		again := in
		again.Previous = r.Assignments
		if r2 := Compute(again); !reflect.DeepEqual(r.Assignments, r2.Assignments) || !reflect.DeepEqual(r.Ops, r2.Ops) {
			t.Fatalf("seed %d: deciding again after a resize differs", seed)
		}
	}
}

// The checkpoint keeps the decision a set was resized from, and only then.
func TestAssignmentJSONKeepsDecided(t *testing.T) {
	a := workload.Assignment{CPUs: cpuset.New(2, 3, 4, 5), Policy: cpualloc.FullPCPUs, Decided: cpuset.New(2, 3)}
	b, err := a.MarshalJSON()
	if err != nil || string(b) != `{"cpus":"2-5","policy":"full-pcpus","decided":"2-3"}` {
		t.Fatalf("marshal = %s, %v", b, err)
	}
	var back workload.Assignment
	if err := back.UnmarshalJSON(b); err != nil || !back.CPUs.Equals(a.CPUs) || !back.Decided.Equals(a.Decided) {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	if err := back.UnmarshalJSON([]byte(`{"cpus":"1","decided":"x"}`)); err == nil {
		t.Fatal("bad decided accepted")
	}
}

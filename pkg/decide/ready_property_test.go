package decide

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// TestDecideProperties: on random nodes, deciding again on the same
// observation with the memory Decide returned changes nothing, saves
// nothing and tells nothing new; no CPU has two exclusive owners; and no
// file is written or restored outside the workload's own cgroup. The memo
// is dropped before the second decision, so the node is decided afresh.
func TestDecideProperties(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 0x2e))
		in := randomInput(rng)
		cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: in.Reserved, BEPool: cpuset.New()}
		obs := Observation{Topology: in.Topology, Config: cfg, Workloads: in.Workloads, Prepared: map[string]bool{}}
		for _, w := range in.Workloads {
			obs.Prepared[w.Cgroup] = rng.IntN(4) > 0
			if rng.IntN(5) == 0 {
				obs.Problems = append(obs.Problems, workload.Problem{Workload: w.Name, Reason: "CgroupMissing", Message: w.Cgroup})
			}
		}
		// The decision reads the observation's workloads in place (Input
		// does not copy them on a node with nothing decided elsewhere): it
		// must leave them as they were.
		seen := fmt.Sprintf("%#v", obs.Workloads)
		r := Decide(obs, Memory{})
		mem := r.Memory
		mem.Last = nil
		r2 := Decide(obs, mem)
		if after := fmt.Sprintf("%#v", obs.Workloads); after != seen {
			t.Fatalf("seed %d: deciding changed the observation's workloads", seed)
		}
		if r2.Save || len(r2.Events) > 0 || len(r2.Warnings) > 0 {
			t.Fatalf("seed %d: deciding again saves %v, tells %v %v", seed, r2.Save, r2.Events, r2.Warnings)
		}
		ops, restores := r.Writes()
		ops2, restores2 := r2.Writes()
		if !reflect.DeepEqual(r.Desired.Assignments, r2.Desired.Assignments) || !reflect.DeepEqual(ops, ops2) || !reflect.DeepEqual(restores, restores2) {
			t.Fatalf("seed %d: deciding twice differs", seed)
		}

		owner := map[int]string{}
		for name, a := range r.Desired.Assignments {
			for _, c := range a.CPUs.UnsortedList() {
				// Static-burst workloads share their CPUs by design, with
				// each other only.
				if prev, ok := owner[c]; ok && (a.Policy != "static-burst" || r.Desired.Assignments[prev].Policy != "static-burst") {
					t.Fatalf("seed %d: CPU %d given to %s and %s", seed, c, prev, name)
				}
				owner[c] = name
			}
		}

		own := func(cg string) bool {
			for _, w := range in.Workloads {
				if obs.Prepared[w.Cgroup] && (cg == w.Cgroup || strings.HasPrefix(cg, w.Cgroup+"/")) {
					return true
				}
			}
			return false
		}
		for _, op := range ops {
			if !own(op.Cgroup) {
				t.Fatalf("seed %d: writes %s of %q, no prepared workload's cgroup", seed, op.Knob, op.Cgroup)
			}
		}
		for _, tg := range restores {
			if !own(tg.Cgroup) {
				t.Fatalf("seed %d: restores %q, no prepared workload's cgroup", seed, tg.Cgroup)
			}
		}
	}
}

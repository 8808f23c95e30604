package decide

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// fourNodes32 is 2 sockets of 2 nodes of 4 cores of 2 threads.
var fourNodes32 = fixture.Shape{Name: "2s-4n-16c-ht", Sockets: 2, NUMAPerSocket: 2, L3PerNUMA: 1,
	CoresPerSocket: 8, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 << 30}

// TestDecideMovesProperties: on random nodes with the switch on, some
// workloads movable, some gone and one new that may need moves: no CPU has
// two owners, a moved workload was movable and keeps its CPU count, and
// deciding again, as the same agent or a restarted one from the
// checkpoint, changes nothing.
func TestDecideMovesProperties(t *testing.T) {
	topo := fixture.MustBuild(fourNodes32)
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New(), MovesEnabled: true}
	policies := []cpualloc.Policy{"", cpualloc.FullPCPUs}
	movedSome := 0
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 0x3f))
		var ws []workload.Workload
		for i, total := 0, 0; total < 24; i++ {
			w := testWorkload(fmt.Sprintf("w%02d", i), 1+rng.IntN(6), true, false, nil)
			w.CPU.Policy, w.Movable = policies[rng.IntN(2)], rng.IntN(3) > 0
			w.CPU.Memory = cpualloc.Memory{Bytes: uint64(1+rng.IntN(4)) << 28}
			total += w.CPU.CPUs
			ws = append(ws, w)
		}
		obs := Observation{Topology: topo, Config: cfg, Workloads: ws, Prepared: map[string]bool{}, Now: moveNow}
		for _, w := range ws {
			obs.Prepared[w.Cgroup] = true
		}
		first := Decide(obs, Memory{})
		// Some go, one comes that may need a whole node.
		var kept []workload.Workload
		for _, w := range ws {
			if rng.IntN(3) > 0 {
				kept = append(kept, w)
			}
		}
		kept = append(kept, testWorkload("new", 4+rng.IntN(5), true, false, nil))
		obs.Prepared[kept[len(kept)-1].Cgroup] = true
		obs.Workloads = kept
		mem := first.Memory
		mem.Last = nil
		r := Decide(obs, mem)

		owner := map[int]string{}
		for name, a := range r.Desired.Assignments {
			for _, c := range a.CPUs.UnsortedList() {
				if prev, ok := owner[c]; ok {
					t.Fatalf("seed %d: CPU %d given to %s and %s", seed, c, prev, name)
				}
				owner[c] = name
			}
		}
		for _, mv := range r.Desired.Moves {
			movedSome++
			before, after := first.Desired.Assignments[mv.Workload], r.Desired.Assignments[mv.Workload]
			var w workload.Workload
			for _, k := range kept {
				if k.Name == mv.Workload {
					w = k
				}
			}
			if !w.Movable || !before.CPUs.Equals(mv.From) || !after.CPUs.Equals(mv.To) || after.CPUs.Size() != before.CPUs.Size() {
				t.Fatalf("seed %d: move %+v of %s (movable %v): before %s, after %s", seed, mv.Move, mv.Workload, w.Movable, before.CPUs, after.CPUs)
			}
		}
		if len(r.Desired.Moves) > 0 && len(topo.NodesOf(r.Desired.Assignments["new"].CPUs)) != 1 {
			t.Fatalf("seed %d: moved %v, yet new is on %s", seed, r.Desired.Moves, r.Desired.Assignments["new"].CPUs)
		}

		again := r.Memory
		again.Last = nil
		for name, m := range map[string]Memory{"kept": again, "restarted": Memory{}.From(r.Kept())} {
			r2 := Decide(obs, m)
			if r2.Save || len(r2.Events) > 0 || len(r2.Desired.Moves) > 0 || !SameAssignments(r.Desired.Assignments, r2.Desired.Assignments) {
				t.Fatalf("seed %d, %s: deciding again saves %v, tells %v, moves %v", seed, name, r2.Save, reasons(r2.Events), r2.Desired.Moves)
			}
		}
	}
	if movedSome == 0 {
		t.Fatal("no seed made a move: the property is not exercised")
	}
	t.Logf("%d moves over 200 seeds", movedSome)
}

package cpualloc

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// replicaFigures is what placing replicas one after another did to the node.
type replicaFigures struct {
	coresShared int // physical cores holding CPUs of two or more replicas
	cpusShared  int // CPUs held by two or more replicas
	crossNUMA   int // replicas whose CPUs span NUMA nodes
	wholeTaken  int // whole free cores (before the replicas) that replicas took CPUs of
	wholeBroken int // of those, cores with a thread left unused: taken only in part
}

// placeReplicas places n replicas of req one after the other with alloc,
// each seeing the ones before, and measures the result.
func placeReplicas(t testing.TB, topo *topology.Topology, st State, req Request, n int,
	alloc func(State, Request) (Result, error)) replicaFigures {
	t.Helper()
	cores := coresOf(topo)
	whole := map[int]bool{}
	o := oracleAs(scenario{topo: topo, st: st, reserved: cpuset.New(), req: req}, StaticBurst)
	for core := range cores {
		whole[core] = o.whole[core]
	}
	var f replicaFigures
	owners := map[int]map[int]bool{} // cpu -> replicas
	for i := range n {
		res, err := alloc(st, req)
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		if len(res.NUMANodes) > 1 {
			f.crossNUMA++
		}
		for _, id := range res.CPUs.UnsortedList() {
			if owners[id] == nil {
				owners[id] = map[int]bool{}
			}
			owners[id][i] = true
		}
		st = st.With(res, req)
	}
	for core, cpus := range cores {
		byCore, used := map[int]bool{}, 0
		for _, id := range cpus {
			for r := range owners[id] {
				byCore[r] = true
			}
			if len(owners[id]) > 1 {
				f.cpusShared++
			}
			if len(owners[id]) > 0 {
				used++
			}
		}
		if len(byCore) > 1 {
			f.coresShared++
		}
		if whole[core] && used > 0 {
			f.wholeTaken++
			if used < len(cpus) {
				f.wholeBroken++
			}
		}
	}
	return f
}

// TestStaticBurstReplicas places 8 replicas of the seed's Deployment
// (request 1, limit 4, cpu-policy static-burst) on the 192- and 256-CPU
// fixtures, idle and 70 % taken, with the current policy and the legacy one
// in the same run, and prints the figures of docs/benchmarks.md:
//
//	go test -run TestStaticBurstReplicas -v ./pkg/cpualloc
//
// It holds the current policy to its promises: never across NUMA nodes, and
// no CPU or core shared between replicas while whole cores or fragments last.
func TestStaticBurstReplicas(t *testing.T) {
	req := Request{CPUs: 4, Policy: StaticBurst, RequestMilli: 1000}
	var table []string
	for _, shape := range []fixture.Shape{fixture.Intel2S96C, fixture.AMDNPS1, fixture.AMDNPS4} {
		topo := fixture.MustBuild(shape)
		a, err := NewAllocator(topo)
		if err != nil {
			t.Fatal(err)
		}
		for _, load := range []struct {
			name string
			st   State
		}{
			{"idle", State{}},
			{"70 % taken", busyStates(topo, 1)[0]},
		} {
			cur := placeReplicas(t, topo, load.st, req, 8, func(st State, r Request) (Result, error) { return a.Allocate(st, cpuset.New(), r) })
			old := placeReplicas(t, topo, load.st, req, 8, func(st State, r Request) (Result, error) { return legacyStaticBurst(a, st, cpuset.New(), r) })
			for _, row := range []struct {
				name string
				f    replicaFigures
			}{{"legacy", old}, {"current", cur}} {
				table = append(table, fmt.Sprintf("| %s (%d CPUs) | %s | %s | %d | %d | %d | %d | %d |", shape.Name, len(topo.CPUs), load.name, row.name,
					row.f.coresShared, row.f.cpusShared, row.f.crossNUMA, row.f.wholeTaken, row.f.wholeBroken))
			}
			if cur.crossNUMA != 0 {
				t.Errorf("%s %s: %d replicas span NUMA nodes", shape.Name, load.name, cur.crossNUMA)
			}
			// Idle, and at 70 % on these shapes, whole cores and fragments
			// outnumber 8 × 4 CPUs on a node: no sharing is possible to avoid.
			if cur.coresShared != 0 || cur.cpusShared != 0 {
				t.Errorf("%s %s: replicas share %d cores, %d CPUs", shape.Name, load.name, cur.coresShared, cur.cpusShared)
			}
		}
	}
	t.Logf("\n| fixture | node | policy | cores shared between replicas | CPUs shared | cross-NUMA sets | whole cores taken | of them in part |\n|---|---|---|---|---|---|---|---|\n%s",
		strings.Join(table, "\n"))
}

package moveplan

import (
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

const gib = uint64(1) << 30

// twoNodes16 is 2 nodes of 4 cores of 2 threads: node 0 is CPUs 0-7, node 1
// is 8-15, each core two adjacent ids.
var twoNodes16 = fixture.Shape{Name: "2n-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 * gib}

func cpus(t testing.TB, list string) cpuset.CPUSet {
	t.Helper()
	s, err := topology.ParseCPUList(list)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkReplay carries plan out on in, move by move, and fails t when a
// move lands on a CPU taken at its turn, changes a workload's count, moves
// an immovable or unknown workload, overdraws a node's memory, or the
// request's CPUs are taken once the moves are done.
func checkReplay(t testing.TB, topo *topology.Topology, in Input, plan Plan) {
	t.Helper()
	taken := in.State.Exclusive.CPUSet()
	byName := map[string]Holding{}
	for _, h := range in.Holdings {
		taken = taken.Union(h.CPUs)
		byName[h.Name] = h
	}
	free := in.State.Free
	moved := map[string]bool{}
	for _, mv := range plan.Moves {
		h, ok := byName[mv.Workload]
		switch {
		case !ok || !h.Movable:
			t.Fatalf("move of %q, not a movable holding", mv.Workload)
		case moved[mv.Workload]:
			t.Fatalf("%q moved twice", mv.Workload)
		case !mv.From.Equals(h.CPUs):
			t.Fatalf("%q moved from %s, holds %s", mv.Workload, mv.From, h.CPUs)
		case mv.To.Size() != h.CPUs.Size():
			t.Fatalf("%q: %d CPUs become %d", mv.Workload, h.CPUs.Size(), mv.To.Size())
		case !mv.To.Intersection(taken).IsEmpty():
			t.Fatalf("%q moves onto taken CPUs %s", mv.Workload, mv.To.Intersection(taken))
		case !mv.To.Intersection(in.Reserved).IsEmpty():
			t.Fatalf("%q moves onto reserved CPUs", mv.Workload)
		case len(topo.NodesOf(mv.To)) > len(topo.NodesOf(mv.From)):
			t.Fatalf("%q spreads from nodes %v to %v", mv.Workload, topo.NodesOf(mv.From), topo.NodesOf(mv.To))
		}
		if free != nil && !h.Memory.IsZero() {
			held := cpualloc.Hold(mv.MemNodes, free, h.Memory)
			for node, m := range held {
				if f := free[node]; m.Bytes > f.Bytes || m.HugePages2Mi > f.HugePages2Mi || m.HugePages1Gi > f.HugePages1Gi {
					t.Fatalf("%q: node %d cannot hold %+v, has %+v", mv.Workload, node, m, f)
				}
			}
			free = cpualloc.GiveBack(cpualloc.Subtract(free, held), h.MemHeld)
		}
		moved[mv.Workload] = true
		taken = taken.Union(mv.To).Difference(mv.From)
	}
	if got := plan.Result.CPUs; got.Size() != in.Request.CPUs || !got.Intersection(taken).IsEmpty() {
		t.Fatalf("request placed on %s (%d asked) with %s taken", got, in.Request.CPUs, taken)
	}
}

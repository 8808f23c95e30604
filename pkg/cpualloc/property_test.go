package cpualloc

import (
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestRandomStates(t *testing.T) {
	shapes := append(fixture.Shipped(), isolatedShape(fixture.AMDNPS4, "0-7,128-135"),
		offlineShape(fixture.Intel2S96C, "96,150-160"))
	for _, shape := range shapes {
		t.Run(shape.Name, func(t *testing.T) {
			topo := fixture.MustBuild(shape)
			r := rand.New(rand.NewPCG(42, uint64(len(shape.Name))))
			for range 400 {
				checkScenario(t, randomScenario(r, topo, r.Float64()))
			}
		})
	}
}

// reshuffled is st rebuilt with its CPUs and loads inserted in a random order.
func reshuffled(st State) State {
	ids := st.Exclusive.CPUSet().List()
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	out := State{Exclusive: NewBits(ids...), BurstMilli: map[int]int64{}}
	keys := make([]int, 0, len(st.BurstMilli))
	for id := range st.BurstMilli {
		keys = append(keys, id)
	}
	rand.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, id := range keys {
		out.BurstMilli[id] = st.BurstMilli[id]
	}
	return out
}

func sharesCore(topo *topology.Topology, cpus cpuset.CPUSet) bool {
	seen := map[int]bool{}
	for _, id := range cpus.UnsortedList() {
		c, _ := topo.CPU(id)
		if seen[c.Core] {
			return true
		}
		seen[c.Core] = true
	}
	return false
}

func coresWithUsable(topo *topology.Topology, o oracle, nodes []int) int {
	seen := map[int]bool{}
	for _, c := range topo.CPUs {
		if o.usable[c.ID] && containsInt(nodes, c.NUMA) {
			seen[c.Core] = true
		}
	}
	return len(seen)
}

// burstClass is a usable CPU's class for static-burst (docs/allocator.md):
// 0 a fragment (off whole cores, no burst load on its core), 1 a thread of a
// whole free core, 2 a free thread beside burst load, 3 a CPU with burst load.
func burstClass(sc scenario, o oracle, id int) int {
	c, _ := sc.topo.CPU(id)
	switch {
	case sc.st.BurstMilli[id] > 0:
		return 3
	case slices.ContainsFunc(coresOf(sc.topo)[c.Core], func(s int) bool { return sc.st.BurstMilli[s] > 0 }):
		return 2
	case o.whole[c.Core]:
		return 1
	}
	return 0
}

// checkBurstClasses: a static-burst result lies in one node, and taking a CPU
// of one class leaves no usable CPU of a better class in that node unused:
// fragments before whole cores, both before sharing a core with another
// burst pod, all of those before stacking on one.
func checkBurstClasses(t testing.TB, sc scenario, o oracle, res Result) {
	t.Helper()
	if len(res.NUMANodes) != 1 {
		t.Fatalf("static-burst %s spans nodes %v", res.CPUs, res.NUMANodes)
	}
	worst := 0
	for _, id := range res.CPUs.UnsortedList() {
		worst = max(worst, burstClass(sc, o, id))
	}
	for _, c := range sc.topo.CPUs {
		if c.NUMA == res.NUMANodes[0] && o.usable[c.ID] && !res.CPUs.Contains(c.ID) && burstClass(sc, o, c.ID) < worst {
			t.Fatalf("static-burst %s takes a CPU of class %d but leaves cpu %d of class %d in node %d",
				res.CPUs, worst, c.ID, burstClass(sc, o, c.ID), c.NUMA)
		}
	}
}

// checkSpreadFragments: a spread result that takes a thread of a whole free
// core of several threads holds a thread of every left-over core (usable,
// not whole) in each L3 group it touches: left-overs go first within a
// group. A hybrid part's single-thread core, taken whole, breaks nothing.
func checkSpreadFragments(t testing.TB, sc scenario, o oracle, res Result) {
	t.Helper()
	type group struct{ node, l3 int }
	held, broke := map[int]bool{}, map[group]bool{}
	threads := coresOf(sc.topo)
	for _, id := range res.CPUs.UnsortedList() {
		c, _ := sc.topo.CPU(id)
		held[c.Core] = true
		if o.whole[c.Core] && len(threads[c.Core]) > 1 {
			broke[group{c.NUMA, c.L3}] = true
		}
	}
	for _, c := range sc.topo.CPUs {
		if broke[group{c.NUMA, c.L3}] && o.usable[c.ID] && !o.whole[c.Core] && !held[c.Core] {
			t.Fatalf("spread %s breaks a whole core but skips left-over cpu %d of its L3 group", res.CPUs, c.ID)
		}
	}
}

// Views are pooled per topology: decisions running at once must not see each
// other's scratch. Run with -race to check the pool too.
func TestConcurrentDecisions(t *testing.T) {
	topo := fixture.MustBuild(fixture.AMDNPS4)
	r := rand.New(rand.NewPCG(9, 9))
	scenarios := make([]scenario, 64)
	want := make([]Result, len(scenarios))
	wantErr := make([]error, len(scenarios))
	for i := range scenarios {
		scenarios[i] = randomScenario(r, topo, 0.5)
		want[i], wantErr[i] = Allocate(topo, scenarios[i].st, scenarios[i].reserved, scenarios[i].req)
	}
	done := make(chan string, 4)
	for g := range 4 {
		go func() {
			for i := range scenarios {
				sc := scenarios[(i+g*16)%len(scenarios)]
				got, err := Allocate(topo, sc.st, sc.reserved, sc.req)
				w, we := want[(i+g*16)%len(scenarios)], wantErr[(i+g*16)%len(scenarios)]
				if (err == nil) != (we == nil) || err == nil && !got.CPUs.Equals(w.CPUs) {
					done <- "concurrent decision differs: " + got.CPUs.String() + " vs " + w.CPUs.String()
					return
				}
			}
			done <- ""
		}()
	}
	for range 4 {
		if msg := <-done; msg != "" {
			t.Fatal(msg)
		}
	}
}

// TestAllocateBitsSame: the exclusive CPUs given as bits decide exactly
// as the same CPUs given as a set.
func TestAllocateBitsSame(t *testing.T) {
	for _, shape := range append(fixture.Shipped(), offlineShape(fixture.Intel2S96C, "96,150-160")) {
		topo := fixture.MustBuild(shape)
		a, err := NewAllocator(topo)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, uint64(len(shape.Name))))
		for i := range 300 {
			sc := randomScenario(r, topo, r.Float64())
			var bits []uint64
			for _, id := range sc.st.Exclusive.CPUSet().UnsortedList() {
				for id>>6 >= len(bits) {
					bits = append(bits, 0)
				}
				bits[id>>6] |= 1 << (id & 63)
			}
			if i%3 == 0 { // ids beyond every CPU's
				for len(bits) <= topo.CPUs[len(topo.CPUs)-1].ID>>6 {
					bits = append(bits, 0)
				}
				bits = append(bits, 1<<63, 1)
			}
			want, wantErr := a.Allocate(sc.st, sc.reserved, sc.req)
			got, gotErr := a.AllocateBits(bits, sc.st.BurstMilli, sc.reserved, sc.req)
			if !got.CPUs.Equals(want.CPUs) || got.Policy != want.Policy || !slices.Equal(got.NUMANodes, want.NUMANodes) ||
				(gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Fatalf("%s, %+v on %s: bits gave %v %v, the set %v %v", shape.Name, sc.req, sc.st.Exclusive, got, gotErr, want, wantErr)
			}
		}
	}
}

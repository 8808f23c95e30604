package cpualloc

import (
	"math/rand/v2"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// FuzzAllocate drives random scenarios from a fuzzed seed and occupancy and
// checks the same invariants as TestRandomStates.
func FuzzAllocate(f *testing.F) {
	for _, seed := range []struct {
		seed  uint64
		shape uint8
		busy  uint8
	}{{1, 0, 70}, {2, 1, 30}, {3, 2, 90}, {4, 3, 0}, {5, 4, 50}, {6, 2, 100}} {
		f.Add(seed.seed, seed.shape, seed.busy)
	}
	shapes := fixture.Shipped()
	f.Fuzz(func(t *testing.T, seed uint64, shape, busy uint8) {
		topo := fixture.MustBuild(shapes[int(shape)%len(shapes)])
		r := rand.New(rand.NewPCG(seed, 7))
		checkScenario(t, randomScenario(r, topo, float64(busy%101)/100))
	})
}

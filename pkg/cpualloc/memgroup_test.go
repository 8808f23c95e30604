package cpualloc

import (
	"slices"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// MemGroup binds memory by the rule Allocate binds it with: on memFourNodes
// nodes 0-1 share a socket (distance 11) and 2-3 the other (21 across).
func TestMemGroup(t *testing.T) {
	topo := fixture.MustBuild(memFourNodes)
	free := map[int]Memory{0: gibs(64), 1: gibs(10), 2: gibs(64), 3: gibs(64)}
	for _, tc := range []struct {
		name   string
		base   []int
		m      Memory
		want   []int
		wantOK bool
	}{
		{"its own node holds it", []int{0}, gibs(60), []int{0}, true},
		// The nearest node alone is too small; kubelet's rule takes the
		// smallest group that holds it, not the nearest nodes one by one
		// (which would take 0, 1 and 2).
		{"the smallest group, not the nearest nodes", []int{0}, gibs(100), []int{0, 2}, true},
		{"the nearest node when it is enough", []int{0}, gibs(70), []int{0, 1}, true},
		{"a group of nodes kept", []int{2, 3}, gibs(100), []int{2, 3}, true},
		{"widened to all", []int{0}, gibs(200), []int{0, 1, 2, 3}, true},
		{"held nowhere", []int{0}, gibs(300), []int{0}, false},
		{"duplicates and order do not matter", []int{2, 0, 0}, gibs(100), []int{0, 2}, true},
		{"a node the machine lacks", []int{7}, gibs(1), []int{7}, false},
		{"no memory asked", []int{1}, Memory{}, []int{1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := MemGroup(topo, free, tc.base, tc.m)
			if ok != tc.wantOK || !slices.Equal(got, tc.want) {
				t.Fatalf("MemGroup(%v, %v) = %v, %v; want %v, %v", tc.base, tc.m, got, ok, tc.want, tc.wantOK)
			}
		})
	}
	if got, ok := MemGroup(topo, nil, []int{1}, gibs(500)); !ok || !slices.Equal(got, []int{1}) {
		t.Fatalf("memory not accounted: %v, %v; want the base", got, ok)
	}
}

// Whatever Allocate binds, MemGroup gives for the same CPUs' nodes: the two
// are one rule.
func TestMemGroupIsAllocatesRule(t *testing.T) {
	topo := fixture.MustBuild(memFourNodes)
	free := map[int]Memory{0: gibs(64), 1: gibs(10), 2: gibs(64), 3: gibs(64)}
	for cpus := 1; cpus <= 8; cpus++ {
		for _, g := range []uint64{1, 20, 64, 70, 100, 150, 190} {
			res, err := Allocate(topo, State{Free: free}, mustParse(t, ""), Request{CPUs: cpus, Memory: gibs(g)})
			if err != nil {
				continue
			}
			got, ok := MemGroup(topo, free, res.NUMANodes, gibs(g))
			if !ok || !slices.Equal(got, res.MemNodes) {
				t.Errorf("%d CPUs, %d GiB: Allocate bound %v on CPUs' nodes %v, MemGroup gives %v (%v)",
					cpus, g, res.MemNodes, res.NUMANodes, got, ok)
			}
		}
	}
}

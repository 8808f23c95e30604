package cpualloc

import (
	"maps"
	"math"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestHold(t *testing.T) {
	const page1G, page2M = 1 << 30, 2 << 20
	cases := []struct {
		name  string
		group []int
		free  map[int]Memory
		m     Memory
		want  map[int]Memory
	}{
		{"one node holds it all", []int{1}, map[int]Memory{1: gibs(8)}, gibs(4),
			map[int]Memory{1: gibs(4)}},
		{"lowest id first, in any order given", []int{3, 1}, map[int]Memory{1: gibs(3), 3: gibs(8)}, gibs(4),
			map[int]Memory{1: gibs(3), 3: gibs(1)}},
		{"a node with nothing free holds nothing", []int{0, 1}, map[int]Memory{1: gibs(8)}, gibs(4),
			map[int]Memory{0: {}, 1: gibs(4)}},
		{"huge pages in whole pages", []int{0, 1},
			map[int]Memory{0: {HugePages2Mi: 3*page2M + page2M/2, HugePages1Gi: page1G + page1G/2}, 1: {HugePages2Mi: 8 * page2M, HugePages1Gi: 4 * page1G}},
			Memory{HugePages2Mi: 4 * page2M, HugePages1Gi: 2 * page1G},
			map[int]Memory{0: {HugePages2Mi: 3 * page2M, HugePages1Gi: page1G}, 1: {HugePages2Mi: page2M, HugePages1Gi: page1G}}},
		{"what the group has no room for is the last node's", []int{0, 1}, map[int]Memory{0: gibs(1), 1: gibs(1)}, gibs(5),
			map[int]Memory{0: gibs(1), 1: gibs(4)}},
		{"a node named twice counts once", []int{0, 0}, map[int]Memory{0: gibs(8)}, gibs(2),
			map[int]Memory{0: gibs(2)}},
		{"no group holds nothing", nil, map[int]Memory{0: gibs(8)}, gibs(2), map[int]Memory{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hold(tc.group, tc.free, tc.m); !maps.Equal(got, tc.want) {
				t.Fatalf("Hold(%v, %v, %+v) = %v, want %v", tc.group, tc.free, tc.m, got, tc.want)
			}
		})
	}
}

func TestSubtract(t *testing.T) {
	free := map[int]Memory{0: {Bytes: 10, HugePages2Mi: 4}, 1: {Bytes: 3}}
	got := Subtract(free, map[int]Memory{0: {Bytes: 4, HugePages2Mi: 4}, 1: {Bytes: 5}, 2: {Bytes: 1}})
	want := map[int]Memory{0: {Bytes: 6}, 1: {}}
	if !maps.Equal(got, want) {
		t.Fatalf("Subtract = %v, want %v", got, want)
	}
	if free[0].Bytes != 10 {
		t.Fatalf("Subtract changed its input: %v", free)
	}
}

func TestMemoryAddSaturates(t *testing.T) {
	got := Memory{Bytes: math.MaxUint64 - 1, HugePages2Mi: 1}.Add(Memory{Bytes: 5, HugePages2Mi: 2})
	if got != (Memory{Bytes: math.MaxUint64, HugePages2Mi: 3}) {
		t.Fatalf("Add = %+v", got)
	}
}

func TestCapacity(t *testing.T) {
	shape := memFourNodes
	shape.MemoryByNode = map[int]uint64{3: 32 * gib}
	shape.MemoryOnlyNodes = 1
	shape.HugePages = []fixture.NodeHugePages{
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 10}},
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 2, Free: 0}},
	}
	topo := fixture.MustBuild(shape)
	got := Capacity(topo, Memory{Bytes: 10 * gib})
	// The reserve splits over five nodes with memory (the CPU-less one too);
	// huge pages count as reserved whatever is free of them.
	want := map[int]Memory{
		0: gibs(62), 1: {Bytes: 62 * gib, HugePages2Mi: gib, HugePages1Gi: 2 * gib}, 2: gibs(62), 3: gibs(30), 4: gibs(62),
	}
	if !maps.Equal(got, want) {
		t.Fatalf("Capacity = %v, want %v", got, want)
	}
	got = CapacityReserved(topo, map[int]Memory{1: {Bytes: gib, HugePages1Gi: 4 * gib}, 3: gibs(40)})
	want = map[int]Memory{0: gibs(64), 1: {Bytes: 63 * gib, HugePages2Mi: gib}, 2: gibs(64), 3: {}, 4: gibs(64)}
	if !maps.Equal(got, want) {
		t.Fatalf("CapacityReserved = %v, want %v", got, want)
	}
}

//go:build linux

package locality

import "testing"

func TestChunkEnd(t *testing.T) {
	const mib = 1 << 20
	base := func(start, end uint64) region { return region{start: start, end: end, step: 4096, weight: 1} }
	for _, tc := range []struct {
		name string
		addr uint64
		rg   region
		want uint64
	}{
		{"a chunk ends on a 2 MiB boundary", 0x40001000, base(0x40001000, 0x40001000+64*mib), 0x40000000 + 16*mib},
		{"aligned start: a whole chunk", 0x40000000, base(0x40000000, 0x40000000+64*mib), 0x40000000 + 16*mib},
		{"the area's end", 0x40000000, base(0x40000000, 0x40000000+3*mib+4096), 0x40000000 + 3*mib + 4096},
		{"hugetlb areas are not cut", 0x40000000, region{start: 0x40000000, end: 0x40000000 + 16*1024*mib, step: 2 * mib, weight: 512},
			0x40000000 + 4096*2*mib},
	} {
		if got := chunkEnd(tc.addr, tc.rg); got != tc.want {
			t.Errorf("%s: chunkEnd(%#x) = %#x, want %#x", tc.name, tc.addr, got, tc.want)
		}
	}
	// Tiny area not reaching a boundary: the cut would leave nothing, so the
	// chunk runs to the area's end.
	rg := base(0x40001000, 0x40003000)
	if got := chunkEnd(rg.start, rg); got != rg.end {
		t.Errorf("tiny area: chunkEnd = %#x, want %#x", got, rg.end)
	}
}

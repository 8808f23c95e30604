package locality

import (
	"slices"
	"testing"
	"time"
)

func TestTHPHeads(t *testing.T) {
	const page, huge = 4096, 2 << 20
	present := func(pfn uint64) uint64 { return pagemapPresent | pfn }
	// run fills entries for per pages from index i on consecutive frames.
	run := func(e []uint64, i int, pfn uint64) {
		for j := 0; j < 512; j++ {
			e[i+j] = present(pfn + uint64(j))
		}
	}
	thpAt := map[uint64]bool{1024: true, 4096: true}
	flags := func(pfn uint64) (uint64, bool) {
		if thpAt[pfn] {
			return kpfTHP | kpfCompoundHead, true
		}
		return 0, true
	}
	t.Run("aligned THPs, contiguous base pages and gaps", func(t *testing.T) {
		e := make([]uint64, 4*512)
		run(e, 0, 1024)   // a THP
		run(e, 512, 2048) // contiguous base pages, not a THP by kpageflags
		run(e, 1024, 4096)
		e[1024+511] = 0 // its last page is not present: not whole
		run(e, 1536, 1024+512)
		got := thpHeads(0x40000000, e, page, huge, flags)
		if !slices.Equal(got, []int{0}) {
			t.Errorf("heads %v, want [0]", got)
		}
	})
	t.Run("unaligned start", func(t *testing.T) {
		// The area starts 16 KiB before a 2 MiB boundary.
		e := make([]uint64, 4+512+10)
		run(e, 4, 4096)
		got := thpHeads(0x40000000-4*page, e, page, huge, flags)
		if !slices.Equal(got, []int{4}) {
			t.Errorf("heads %v, want [4]", got)
		}
	})
	t.Run("frames not readable", func(t *testing.T) {
		e := make([]uint64, 512)
		for i := range e {
			e[i] = pagemapPresent // no frame numbers without CAP_SYS_ADMIN
		}
		if got := thpHeads(0, e, page, huge, flags); len(got) != 0 {
			t.Errorf("heads %v, want none", got)
		}
	})
	t.Run("misaligned frame", func(t *testing.T) {
		e := make([]uint64, 512)
		run(e, 0, 1025)
		if got := thpHeads(0, e, page, huge, func(uint64) (uint64, bool) { return kpfTHP | kpfCompoundHead, true }); len(got) != 0 {
			t.Errorf("heads %v, want none", got)
		}
	})
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if got := percentile(ds, 99); got != 99*time.Millisecond {
		t.Errorf("p99 of 1..100 ms = %s, want 99ms", got)
	}
	if got := percentile(ds[:1], 99); got != 100*time.Millisecond {
		t.Errorf("p99 of one = %s", got)
	}
	if percentile(nil, 99) != 0 {
		t.Error("p99 of none is not 0")
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("percentile sorted its input")
	}
}

package locality

import (
	"testing"
	"time"
)

// run feeds the controller calls whose duration is cost(pages) and returns
// the sizes it chose.
func run(c *BatchController, calls int, cost func(pages int) time.Duration) (sizes []int, worst time.Duration) {
	for i := 0; i < calls; i++ {
		n := c.Size(BasePages)
		sizes = append(sizes, n)
		took := cost(n)
		worst = max(worst, took)
		c.Observe(BasePages, n, took)
	}
	return sizes, worst
}

func perPage(d time.Duration) func(int) time.Duration {
	return func(n int) time.Duration { return time.Duration(n) * d }
}

func TestBatchShrinksBelowBudget(t *testing.T) {
	// 100 µs a page: 256 pages take 25.6 ms, over a 20 ms budget.
	c := NewBatchController(20*time.Millisecond, 256, 16, 1<<16)
	sizes, _ := run(c, 10, perPage(100*time.Microsecond))
	if sizes[0] != 256 || sizes[1] >= 256 {
		t.Fatalf("sizes %v: want an immediate shrink after the first call", sizes)
	}
	for _, n := range sizes[1:] {
		if took := time.Duration(n) * 100 * time.Microsecond; took > 20*time.Millisecond {
			t.Errorf("sizes %v: a call of %d pages takes %s, over the budget", sizes, n, took)
		}
	}
	// Settles at half the budget: 10 ms / 100 µs = 100 pages.
	if last := sizes[len(sizes)-1]; last < 90 || last > 110 {
		t.Errorf("sizes %v: settled at %d, want about 100", sizes, last)
	}
}

func TestBatchGrowsWhenCheap(t *testing.T) {
	c := NewBatchController(20*time.Millisecond, 256, 16, 1<<16)
	sizes, worst := run(c, 12, perPage(time.Microsecond))
	for i := 1; i < len(sizes); i++ {
		if sizes[i] < sizes[i-1] || sizes[i] > 2*sizes[i-1] {
			t.Fatalf("sizes %v: want steady growth of at most 2x per call", sizes)
		}
	}
	// 10 ms / 1 µs = 10000 pages.
	if last := sizes[len(sizes)-1]; last < 9000 || last > 10000 {
		t.Errorf("sizes %v: settled at %d, want about 10000", sizes, last)
	}
	if worst > 20*time.Millisecond {
		t.Errorf("worst call %s over the budget", worst)
	}
}

func TestBatchAdaptsWhenCostChanges(t *testing.T) {
	c := NewBatchController(20*time.Millisecond, 256, 16, 1<<16)
	run(c, 12, perPage(time.Microsecond)) // grows to ~10000
	big := c.Size(BasePages)
	// The process becomes busy: pages cost 50x more. One call overshoots,
	// then every call fits again.
	sizes, _ := run(c, 6, perPage(50*time.Microsecond))
	if sizes[0] != big {
		t.Fatalf("first size %d, want %d", sizes[0], big)
	}
	for _, n := range sizes[1:] {
		if took := time.Duration(n) * 50 * time.Microsecond; took > 20*time.Millisecond {
			t.Errorf("sizes %v: %d pages take %s after the slowdown", sizes, n, took)
		}
	}
}

func TestBatchRespectsBounds(t *testing.T) {
	c := NewBatchController(20*time.Millisecond, 1, 16, 64)
	if c.Size(BasePages) != 16 {
		t.Fatalf("start below min: size %d", c.Size(BasePages))
	}
	sizes, _ := run(c, 8, perPage(time.Nanosecond))
	if last := sizes[len(sizes)-1]; last != 64 {
		t.Errorf("sizes %v: want capped at 64", sizes)
	}
	run(c, 3, perPage(time.Second))
	if c.Size(BasePages) != 16 {
		t.Errorf("very slow pages: size %d, want the minimum 16", c.Size(BasePages))
	}
}

func TestBatchLearnsEachClassApart(t *testing.T) {
	c := NewBatchController(20*time.Millisecond, 256, 16, 1<<16)
	if got := c.Size(HugePages); got != 512 {
		t.Fatalf("huge batches start at %d base pages, want 512 (one 2 MiB page)", got)
	}
	// Base pages are cheap (1 µs each), huge pages dear (8 ms per 2 MiB,
	// about 16 µs per base page): each class settles where its own calls
	// take half the budget, and neither drags the other.
	for i := 0; i < 12; i++ {
		n := c.Size(BasePages)
		c.Observe(BasePages, n, time.Duration(n)*time.Microsecond)
		h := max(1, c.Size(HugePages)/512) * 512 // whole huge pages, at least one, as the mover takes them
		c.Observe(HugePages, h, time.Duration(h/512)*8*time.Millisecond)
	}
	if n := c.Size(BasePages); n < 9000 || n > 10000 {
		t.Errorf("base batches settled at %d pages, want about 10000", n)
	}
	// 10 ms / (8 ms per 512 pages) = 640 pages: one huge page per call.
	if h := c.Size(HugePages); h < 512 || h >= 1024 {
		t.Errorf("huge batches settled at %d base pages, want 512-1023", h)
	}
	if p := c.PerPage(HugePages); p < 15*time.Microsecond || p > 16*time.Microsecond {
		t.Errorf("huge cost per base page %s, want 15.6µs", p)
	}
}

func TestBatchHugeOvershootShrinksOnlyHuge(t *testing.T) {
	c := NewBatchController(20*time.Millisecond, 256, 16, 1<<16)
	c.Observe(BasePages, 256, time.Millisecond)
	base := c.Size(BasePages)
	c.Observe(HugePages, 2048, 80*time.Millisecond) // four 2 MiB pages in 80 ms
	if h := c.Size(HugePages); h != 256 {
		t.Errorf("after an 80 ms call of 2048 pages: huge size %d, want 256 (10 ms worth)", h)
	}
	if c.Size(BasePages) != base {
		t.Errorf("a huge overshoot changed base batches from %d to %d", base, c.Size(BasePages))
	}
}

// TestBatchModel feeds the controller calls whose cost is a fixed part plus
// a part per page, as a move_pages call's is, on a fake clock: after the
// first call (sized before anything was learned) no call outlasts its limit
// (the budget with StallCall; with StallPage CallLimit, or the budget for
// base pages the kernel moves in units of more than half the budget), once
// grown no call outlasts half of it, and the size settles at the largest
// batch whose call fits half the limit.
func TestBatchModel(t *testing.T) {
	const budget = 20 * time.Millisecond
	for _, tc := range []struct {
		name          string
		stall         StallBound // "": StallCall, NewBatchController's
		class         PageClass
		unit          int // UnitPages with StallPage
		fixed, perPg  time.Duration
		start, lo, hi int
		limit         time.Duration // what a call may last
		want          int           // the largest batch that fits half the limit, within [lo, hi]
	}{
		{"cheap pages", "", BasePages, 0, 50 * time.Microsecond, time.Microsecond, 256, 16, 1 << 16, budget, 9950},
		{"dear pages", "", BasePages, 0, 0, 100 * time.Microsecond, 256, 16, 1 << 16, budget, 100},
		{"dear fixed part", "", BasePages, 0, 2 * time.Millisecond, 10 * time.Microsecond, 256, 16, 1 << 16, budget, 800},
		{"fixed part near the aim", "", BasePages, 0, 9 * time.Millisecond, time.Microsecond, 256, 16, 1 << 16, budget, 1000},
		{"fixed part over the aim", "", BasePages, 0, 12 * time.Millisecond, time.Microsecond, 256, 16, 1 << 16, budget, 16},
		{"slow start", "", BasePages, 0, 3 * time.Millisecond, 300 * time.Microsecond, 256, 1, 1 << 16, budget, 23},
		{"capped", "", BasePages, 0, 0, time.Nanosecond, 256, 16, 4096, budget, 4096},
		{"huge pages, bounded calls", "", HugePages, 0, 50 * time.Microsecond, 16 * time.Microsecond, 256, 16, 1 << 16, budget, 621},
		// A huge page of 8 ms: with the page bounded, calls of some 12
		// huge pages (100 ms) instead of one.
		{"page: huge pages", StallPage, HugePages, 1, 50 * time.Microsecond, 16 * time.Microsecond, 256, 16, 1 << 16, CallLimit, 6246},
		{"page: base pages one by one (Linux 6.1)", StallPage, BasePages, 1, 50 * time.Microsecond, 100 * time.Microsecond, 256, 16, 1 << 16, CallLimit, 999},
		{"page: cheap base pages in units of 512", StallPage, BasePages, 512, 0, 10 * time.Microsecond, 256, 16, 1 << 16, CallLimit, 10000},
		// 512 pages of 100 µs outlast half the budget: the call is the
		// unit, bounded by the budget as before.
		{"page: dear base pages in units of 512", StallPage, BasePages, 512, 0, 100 * time.Microsecond, 256, 16, 1 << 16, budget, 100},
		{"page: capped", StallPage, HugePages, 1, 0, time.Microsecond, 256, 16, 1 << 16, CallLimit, 1 << 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cost := func(n int) time.Duration { return tc.fixed + time.Duration(n)*tc.perPg }
			c := NewBatchController(budget, tc.start, tc.lo, tc.hi)
			if tc.stall != "" {
				c.Stall, c.UnitPages = tc.stall, tc.unit
			}
			var sizes []int
			grown := false
			for i := 0; i < 61; i++ {
				n := c.Size(tc.class)
				took := cost(n)
				if i > 0 && took > tc.limit {
					t.Fatalf("call %d of %d pages takes %s, over its limit %s (sizes %v)", i+1, n, took, tc.limit, sizes)
				}
				if grown && took > tc.limit/2 && n > tc.lo {
					t.Fatalf("call %d of %d pages takes %s after the size grew, over half its limit %s", i+1, n, took, tc.limit)
				}
				if len(sizes) > 0 && n > sizes[len(sizes)-1] {
					grown = true
				}
				sizes = append(sizes, n)
				c.Observe(tc.class, n, took)
			}
			last := sizes[len(sizes)-1]
			if last > tc.want || last < tc.want*95/100 {
				t.Errorf("settled at %d pages, want the largest that fits, %d (sizes %v)", last, tc.want, sizes)
			}
		})
	}
}

// TestBatchWait checks the wait a call is charged with: the whole call when
// the budget bounds calls, one unit's share of it when it bounds pages.
func TestBatchWait(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall StallBound
		unit  int
		class PageClass
		pages int
		took  time.Duration
		want  time.Duration
	}{
		{"call: the whole call", StallCall, 1, HugePages, 2048, 80 * time.Millisecond, 80 * time.Millisecond},
		{"page: one huge page of four", StallPage, 1, HugePages, 2048, 80 * time.Millisecond, 20 * time.Millisecond},
		{"page: one huge page alone", StallPage, 512, HugePages, 512, 30 * time.Millisecond, 30 * time.Millisecond},
		{"page: one base page (6.1)", StallPage, 1, BasePages, 100, 50 * time.Millisecond, 500 * time.Microsecond},
		{"page: 512 base pages of 1024 (6.3)", StallPage, 512, BasePages, 1024, 100 * time.Millisecond, 50 * time.Millisecond},
		{"page: a call under the unit is the unit (6.3)", StallPage, 512, BasePages, 100, 10 * time.Millisecond, 10 * time.Millisecond},
		{"page: nothing moved", StallPage, 1, BasePages, 0, 10 * time.Millisecond, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewBatchController(20*time.Millisecond, 256, 16, 1<<16)
			c.Stall, c.UnitPages = tc.stall, tc.unit
			if got := c.Wait(tc.class, tc.pages, tc.took); got != tc.want {
				t.Errorf("Wait(%d pages, %s) = %s, want %s", tc.pages, tc.took, got, tc.want)
			}
		})
	}
}

func TestKernelUnitPages(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    int
	}{
		{"6.1.0-18-amd64", 1},
		{"5.15.0-91-generic", 1},
		{"4.19.0", 1},
		{"6.2.16", 1},
		{"6.3.0", 512},
		{"6.8.0-31-generic", 512},
		{"6.10-rc1", 512},
		{"7.0.0", 512},
		{"", 512},
		{"six.one", 512},
		{"6", 512},
	} {
		if got := KernelUnitPages(tc.release); got != tc.want {
			t.Errorf("KernelUnitPages(%q) = %d, want %d", tc.release, got, tc.want)
		}
	}
}

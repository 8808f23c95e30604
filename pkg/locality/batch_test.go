package locality

import (
	"testing"
	"time"
)

// run feeds the controller calls whose duration is cost(pages) and returns
// the sizes it chose.
func run(c *BatchController, calls int, cost func(pages int) time.Duration) (sizes []int, worst time.Duration) {
	for i := 0; i < calls; i++ {
		n := c.Size()
		sizes = append(sizes, n)
		took := cost(n)
		worst = max(worst, took)
		c.Observe(n, took)
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
	big := c.Size()
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
	if c.Size() != 16 {
		t.Fatalf("start below min: size %d", c.Size())
	}
	sizes, _ := run(c, 8, perPage(time.Nanosecond))
	if last := sizes[len(sizes)-1]; last != 64 {
		t.Errorf("sizes %v: want capped at 64", sizes)
	}
	run(c, 3, perPage(time.Second))
	if c.Size() != 16 {
		t.Errorf("very slow pages: size %d, want the minimum 16", c.Size())
	}
}

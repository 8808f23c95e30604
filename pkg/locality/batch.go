package locality

import "time"

// BatchController sizes move_pages(2) calls so that no single call holds the
// process's pages longer than Budget. While a page migrates, the process
// faults on it and waits, and the call holds the mm's lock for reading
// throughout, so a call's duration bounds the longest stall it can cause.
//
// It aims at half the budget to leave room for noise: after each call it
// estimates the cost per page (an average of the last calls), and
//   - a call over the budget shrinks the next batch at once, in proportion
//     to the overshoot;
//   - otherwise the batch moves towards what fits half the budget, growing
//     at most twofold per call so one cheap call cannot cause a huge one.
type BatchController struct {
	Budget   time.Duration
	Min, Max int

	size    int
	perPage float64 // estimated nanoseconds per page; 0 before the first call
}

// NewBatchController starts at start pages per call within [lo, hi].
func NewBatchController(budget time.Duration, start, lo, hi int) *BatchController {
	lo = max(lo, 1)
	hi = max(hi, lo)
	return &BatchController{Budget: budget, Min: lo, Max: hi, size: clamp(start, lo, hi)}
}

// Size is the number of pages for the next call.
func (c *BatchController) Size() int { return c.size }

// Observe records that a call of pages pages took took.
func (c *BatchController) Observe(pages int, took time.Duration) {
	if pages <= 0 || c.Budget <= 0 {
		return
	}
	cost := float64(took) / float64(pages)
	if c.perPage == 0 {
		c.perPage = cost
	} else {
		c.perPage = (c.perPage + cost) / 2
	}
	target := float64(c.Budget) / 2
	if took > c.Budget {
		// Trust the call that overshot, not the average.
		c.perPage = max(c.perPage, cost)
		c.size = clamp(int(float64(pages)*target/float64(took)), c.Min, c.Max)
		return
	}
	want := c.Max
	if c.perPage > 0 {
		want = int(min(target/c.perPage, float64(c.Max)))
	}
	c.size = clamp(want, c.Min, min(c.Max, 2*max(c.size, pages)))
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

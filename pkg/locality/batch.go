package locality

import "time"

// PageClass tells apart pages whose move costs differ by orders of
// magnitude per call slot: a base page copies 4 KiB, a huge page (a
// transparent huge page named by its head, or a hugetlb page) 2 MiB or more.
type PageClass int

const (
	BasePages PageClass = iota
	HugePages
)

// BatchController sizes move_pages(2) calls so that no single call holds the
// process's pages longer than Budget. While a page migrates, the process
// faults on it and waits, so a call's duration bounds the longest stall it
// can cause.
//
// Sizes are in base pages (bytes, not call entries: one 2 MiB huge page
// weighs 512), learned apart for each PageClass since a huge page's copy
// and a base page's bookkeeping cost differently per byte. For each class it
// aims at half the budget to leave room for noise: after each call it
// estimates the cost per base page (an average of the last calls, which also
// spreads the call's fixed cost, so the size settles where a call's whole
// cost meets the aim), and
//   - a call that comes close to the budget (over three quarters of it)
//     shrinks the next batch at once, in proportion, to what that call says
//     fits half the budget: a slow call is trusted over the average;
//   - otherwise the batch moves towards what fits half the budget, growing
//     at most twofold per call so one cheap call cannot cause a huge one.
//
// When a call costs a fixed part plus a part per page, the average cost per
// page of a batch is at least that of any larger batch, so growing by it
// never overshoots the aim; the size settles at the largest batch whose call
// fits half the budget (TestBatchModel holds both).
//
// A huge page cannot be split by the caller, so a huge batch always holds at
// least one; when one huge page alone outlasts the budget, so does its call.
type BatchController struct {
	Budget   time.Duration
	Min, Max int // base pages per call

	class [2]classCost
}

type classCost struct {
	size    int
	perPage float64 // estimated nanoseconds per base page; 0 before the first call
	// The last call, for the line through it and the one before: a call's
	// fixed part and its part per page, when the two calls differ in size.
	lastPages int
	lastTook  float64
}

// hugeStart is where huge batches start: one 2 MiB page.
const hugeStart = 512

// NewBatchController starts base-page batches at start pages per call, and
// huge-page batches at one 2 MiB page, within [lo, hi].
func NewBatchController(budget time.Duration, start, lo, hi int) *BatchController {
	lo = max(lo, 1)
	hi = max(hi, lo)
	c := &BatchController{Budget: budget, Min: lo, Max: hi}
	c.class[BasePages].size = clamp(start, lo, hi)
	c.class[HugePages].size = clamp(hugeStart, lo, hi)
	return c
}

// Size is the number of base pages (bytes / 4 KiB) for the next call of the
// class.
func (c *BatchController) Size(k PageClass) int { return c.class[k].size }

// PerPage is the estimated cost of one base page of the class, 0 before
// any call.
func (c *BatchController) PerPage(k PageClass) time.Duration {
	return time.Duration(c.class[k].perPage)
}

// Observe records that a call moving pages base pages of the class took took.
func (c *BatchController) Observe(k PageClass, pages int, took time.Duration) {
	if pages <= 0 || c.Budget <= 0 {
		return
	}
	s := &c.class[k]
	cost := float64(took) / float64(pages)
	if s.perPage == 0 {
		s.perPage = cost
	} else {
		s.perPage = (s.perPage + cost) / 2
	}
	target := float64(c.Budget) / 2
	if took > c.Budget*3/4 {
		// Trust the call that came close, not the average.
		s.perPage = max(s.perPage, cost)
		s.size = clamp(int(float64(pages)*target/float64(took)), c.Min, c.Max)
		s.lastPages, s.lastTook = pages, float64(took)
		return
	}
	want := c.Max
	if s.perPage > 0 {
		want = int(min(target/s.perPage, float64(c.Max)))
	}
	if fits := s.line(pages, float64(took), target); fits > float64(want) {
		want = int(min(fits, float64(c.Max)))
	}
	s.size = clamp(want, c.Min, min(c.Max, 2*max(s.size, pages)))
}

// line is the batch that fits target on the line through the last call and
// this one (fixed part plus part per page), or 0 when the two do not make a
// line with a fixed part and a cost per page: the average alone then
// decides. Where the fixed part dominates, the average per page converges
// slowly from above; the line reaches the size at once.
func (s *classCost) line(pages int, took, target float64) float64 {
	prevPages, prevTook := s.lastPages, s.lastTook
	s.lastPages, s.lastTook = pages, took
	if prevPages == 0 || prevPages == pages {
		return 0
	}
	slope := (took - prevTook) / float64(pages-prevPages)
	fixed := took - slope*float64(pages)
	if slope <= 0 || fixed < 0 || fixed >= target {
		return 0
	}
	return (target - fixed) / slope
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

package locality

import (
	"strconv"
	"strings"
	"time"
)

// PageClass tells apart pages whose move costs differ by orders of
// magnitude per call slot: a base page copies 4 KiB, a huge page (a
// transparent huge page named by its head, or a hugetlb page) 2 MiB or more.
type PageClass int

const (
	BasePages PageClass = iota
	HugePages
)

// StallBound says what a migration's budget bounds.
type StallBound string

const (
	// StallPage bounds what a thread of the workload waits for: the
	// kernel's unit of a move. In a move_pages(2) call the kernel unmaps,
	// copies and remaps page by page (before Linux 6.3) or in batches of at
	// most 512 base pages or one huge page (6.3 on), and holds the mmap lock
	// only to look each page up, never over a copy; so a thread that touches
	// a moving page waits for that page's (batch's) move, however long the
	// call. Calls are then sized for throughput, up to CallLimit.
	StallPage StallBound = "page"
	// StallCall bounds each call's duration, a bound on the wait that holds
	// whatever the kernel does inside a call, at the cost of many calls.
	StallCall StallBound = "call"
)

// CallLimit bounds a call's duration when the budget bounds pages: not a
// stall (no thread waits for a whole call) but how long the migrator runs
// without looking at its context, the free-memory guard or the next pass.
// Calls aim at half of it, where a call's fixed cost (about 0.05 ms, up to
// 10 ms on a busy emulated machine) is a few per cent at most.
const CallLimit = 200 * time.Millisecond

// BatchController sizes move_pages(2) calls. With StallCall no single call
// may hold the process's pages longer than Budget: a call's duration bounds
// the longest stall it can cause. With StallPage (UnitPages says the
// kernel's unit for base pages) a call may last up to CallLimit and the
// Budget bounds one unit's move: a huge page, or UnitPages base pages, a
// batch of base pages being cut to fit the Budget only where the kernel
// moves them together and so many would not fit (a huge page cannot be cut).
//
// Sizes are in base pages (bytes, not call entries: one 2 MiB huge page
// weighs 512), learned apart for each PageClass since a huge page's copy
// and a base page's bookkeeping cost differently per byte. For each class it
// aims at half its limit (the Budget, or CallLimit) to leave room for
// noise: after each call it estimates the cost per base page (an average
// of the last calls, which also spreads the call's fixed cost, so the size
// settles where a call's whole cost meets the aim), and
//   - a call that comes close to the limit (over three quarters of it)
//     shrinks the next batch at once, in proportion, to what that call says
//     fits half the limit: a slow call is trusted over the average;
//   - otherwise the batch moves towards what fits half the limit, growing
//     at most twofold per call so one cheap call cannot cause a huge one.
//
// When a call costs a fixed part plus a part per page, the average cost per
// page of a batch is at least that of any larger batch, so growing by it
// never overshoots the aim; the size settles at the largest batch whose call
// fits half the limit (TestBatchModel holds both).
//
// A huge page cannot be split by the caller, so a huge batch always holds at
// least one; when one huge page alone outlasts the budget, so does the wait
// for it.
type BatchController struct {
	Budget   time.Duration
	Min, Max int // base pages per call
	Stall    StallBound
	// UnitPages is how many base pages the kernel moves together, with
	// StallPage: 1 before Linux 6.3, 512 from it (KernelUnitPages).
	UnitPages int

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
// huge-page batches at one 2 MiB page, within [lo, hi], each call within the
// budget (StallCall); set Stall and UnitPages for StallPage.
func NewBatchController(budget time.Duration, start, lo, hi int) *BatchController {
	lo = max(lo, 1)
	hi = max(hi, lo)
	c := &BatchController{Budget: budget, Min: lo, Max: hi, Stall: StallCall, UnitPages: 1}
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

// Wait is what a call of pages base pages of the class that took took made
// a thread of the workload wait at most, by the stall bound: the whole call
// (StallCall), or one unit's share of it (StallPage): a huge page's 512 base
// pages, or min(pages, UnitPages) base pages. The share is the call's
// average; one unit of it may have taken longer.
func (c *BatchController) Wait(k PageClass, pages int, took time.Duration) time.Duration {
	if c.Stall != StallPage || pages <= 0 {
		return took
	}
	unit := min(pages, hugeStart)
	if k == BasePages {
		unit = min(pages, max(c.UnitPages, 1))
	}
	return time.Duration(float64(took) * float64(unit) / float64(pages))
}

// limit is what a call of the class may last: the budget when it bounds the
// call, or when base pages move in units whose wait the size of a call
// decides (more than the budget's half per unit: the call is the unit);
// CallLimit otherwise.
func (c *BatchController) limit(k PageClass, perPage float64) time.Duration {
	if c.Stall != StallPage {
		return c.Budget
	}
	if k == BasePages && c.UnitPages > 1 && perPage*float64(c.UnitPages) > float64(c.Budget)/2 {
		return c.Budget
	}
	return max(CallLimit, c.Budget)
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
	limit := c.limit(k, s.perPage)
	target := float64(limit) / 2
	if took > limit*3/4 {
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

// KernelUnitPages is how many base pages a kernel of that release (uname
// -r: "6.1.0-18-amd64") moves together in a move_pages(2) call: one before
// 6.3, which unmaps, copies and remaps page by page; from 6.3 up to 512
// (NR_MAX_BATCHED_MIGRATION), unmapped together before their copies. A
// release it cannot read gets 512, the larger unit: its wait is the longer
// estimate.
func KernelUnitPages(release string) int {
	majorText, rest, _ := strings.Cut(release, ".")
	minorText := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorText = rest[:i]
	}
	major, err1 := strconv.Atoi(majorText)
	minor, err2 := strconv.Atoi(minorText)
	if err1 != nil || err2 != nil {
		return 512
	}
	if major < 6 || major == 6 && minor < 3 {
		return 1
	}
	return 512
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

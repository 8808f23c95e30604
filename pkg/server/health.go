package server

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// FailingReconciles is how many reconciles in a row must fail before
// /healthz reports the agent unhealthy: one failure is often a cgroup the
// kubelet removed mid-write, and the next reconcile retries it.
const FailingReconciles = 3

// DefaultStaleAfter is the health bound for a resync period: a reconcile
// runs at least every resync, so three periods without one completing (and
// never less than 30 s, for slow first reconciles on big hosts) means the
// loop is stuck.
func DefaultStaleAfter(resync time.Duration) time.Duration {
	return max(3*resync, 30*time.Second)
}

// Health follows the reconcile loop for /healthz: when the last reconcile
// completed, whether one is running and since when, and how many failed in
// a row.
type Health struct {
	mu        sync.Mutex
	now       func() time.Time
	bound     time.Duration
	since     time.Time // agent start, or the end of the last reconcile
	running   time.Time // start of the reconcile in progress; zero if none
	failures  int       // reconciles failed in a row
	lastErr   string
	completed int
	succeeded int // reconciles that ended without an error
}

// NewHealth starts following a loop that must complete a reconcile within
// bound; now is the clock.
func NewHealth(now func() time.Time, bound time.Duration) *Health {
	return &Health{now: now, bound: bound, since: now()}
}

// Begin records that a reconcile started.
func (h *Health) Begin() {
	h.mu.Lock()
	h.running = h.now()
	h.mu.Unlock()
}

// InProgress says whether a reconcile has begun and not ended.
func (h *Health) InProgress() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.running.IsZero()
}

// End records a finished reconcile and its first error, if any.
func (h *Health) End(errs []error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running, h.since = time.Time{}, h.now()
	h.completed++
	if len(errs) == 0 {
		h.succeeded++
		h.failures, h.lastErr = 0, ""
		return
	}
	h.failures++
	h.lastErr = errs[0].Error()
}

// check returns why the agent is unhealthy, or "" when it is fine.
func (h *Health) check() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if !h.running.IsZero() && now.Sub(h.running) > h.bound {
		return fmt.Sprintf("a reconcile has been running for %s (bound %s): it is stuck",
			now.Sub(h.running).Round(time.Second), h.bound)
	}
	if h.running.IsZero() && now.Sub(h.since) > h.bound {
		what := "the last reconcile completed"
		if h.completed == 0 {
			what = "the agent started and no reconcile has completed since"
		}
		return fmt.Sprintf("%s %s ago (bound %s): the reconcile loop is not running",
			what, now.Sub(h.since).Round(time.Second), h.bound)
	}
	if h.failures >= FailingReconciles {
		return fmt.Sprintf("the last %d reconciles failed; the latest: %s", h.failures, h.lastErr)
	}
	return ""
}

// ServeHTTP answers 200 "ok" or 503 with the reason.
func (h *Health) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if why := h.check(); why != "" {
		http.Error(w, "unhealthy: "+why, http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

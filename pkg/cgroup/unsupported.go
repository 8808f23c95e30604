package cgroup

import "sync"

// UnsupportedTracker remembers which knobs were already reported unsupported
// on this node, so a missing kernel extension is said once, not per pod and
// per sync. The zero value is ready to use.
type UnsupportedTracker struct {
	mu   sync.Mutex
	seen map[Knob]bool
}

// Fresh returns the Unsupported results whose knob was not reported before,
// one per knob, and remembers those knobs.
func (t *UnsupportedTracker) Fresh(results []Result) []Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen == nil {
		t.seen = map[Knob]bool{}
	}
	var out []Result
	for _, r := range results {
		if r.Outcome == Unsupported && !t.seen[r.Knob] {
			t.seen[r.Knob] = true
			out = append(out, r)
		}
	}
	return out
}

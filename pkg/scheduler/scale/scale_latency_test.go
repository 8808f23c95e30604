package scale

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"
)

// curveParts is how many parts of a pass latencyCurve gives a median of.
const curveParts = 5

// latencyCurve is create->bound's median in each fifth of the pods,
// taken in the order they were created (created[i] and bound[i] are pod
// i's). Whether a pass's latency comes from a queue that builds up (the
// scheduler slower than the creators: the curve rises through the pass)
// or from a cost every pod pays (a level curve) is what it shows; the
// pass's p50 alone does not tell them apart.
func latencyCurve(created, bound []time.Time) [curveParts]time.Duration {
	var out [curveParts]time.Duration
	n := min(len(created), len(bound))
	if n == 0 {
		return out
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return created[a].Compare(created[b]) })
	for p := range curveParts {
		part := order[p*n/curveParts : (p+1)*n/curveParts]
		waits := make([]time.Duration, 0, len(part))
		for _, i := range part {
			waits = append(waits, max(bound[i].Sub(created[i]), 0))
		}
		slices.SortFunc(waits, cmp.Compare)
		out[p] = quantile(waits, 0.5)
	}
	return out
}

func curveText(c [curveParts]time.Duration) string {
	parts := make([]string, len(c))
	for i, d := range c {
		parts[i] = ms(d)
	}
	return strings.Join(parts, " / ")
}

// The curve takes the pods in creation order, not in the order given,
// and each fifth's median of its own pods.
func TestLatencyCurve(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var created, bound []time.Time
	// Ten pods given newest first: the k-th created (k from 0) waits
	// k*100 ms, so the fifths' medians rise.
	for k := 9; k >= 0; k-- {
		c := t0.Add(time.Duration(k) * time.Second)
		created = append(created, c)
		bound = append(bound, c.Add(time.Duration(k)*100*time.Millisecond))
	}
	got := latencyCurve(created, bound)
	want := [curveParts]time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond, 800 * time.Millisecond}
	if got != want {
		t.Errorf("curve %v, want %v", got, want)
	}
	if got := latencyCurve(nil, nil); got != ([curveParts]time.Duration{}) {
		t.Errorf("no pods: %v, want zeros", got)
	}
}

package pace

import (
	"fmt"
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	p := Pacer{Ratio: 3, Bound: time.Second}
	for _, c := range []struct {
		name string
		p    Pacer
		last Last
		now  time.Time
		want time.Time
	}{
		{"never reconciled", p, Last{}, t0, t0},
		{"at rest: the pause ran out long ago", p, Last{End: t0, Took: 100 * ms}, t0.Add(time.Minute), t0.Add(time.Minute)},
		{"right after: Ratio times the reconcile", p, Last{End: t0, Took: 100 * ms}, t0, t0.Add(300 * ms)},
		{"inside the pause: its end", p, Last{End: t0, Took: 100 * ms}, t0.Add(250 * ms), t0.Add(300 * ms)},
		{"the pause's last instant", p, Last{End: t0, Took: 100 * ms}, t0.Add(300 * ms), t0.Add(300 * ms)},
		{"a long reconcile: the bound", p, Last{End: t0, Took: 2 * time.Second}, t0, t0.Add(time.Second)},
		{"just under the bound", p, Last{End: t0, Took: 333 * ms}, t0, t0.Add(999 * ms)},
		{"at the bound", p, Last{End: t0, Took: 334 * ms}, t0, t0.Add(time.Second)},
		{"a huge reconcile does not overflow", p, Last{End: t0, Took: time.Duration(1<<62 + 1)}, t0, t0.Add(time.Second)},
		{"the clock stepped back: still within the bound", p, Last{End: t0.Add(time.Hour), Took: 100 * ms}, t0, t0.Add(time.Second)},
		{"ratio 0: no pace", Pacer{Bound: time.Second}, Last{End: t0, Took: 100 * ms}, t0, t0},
		{"bound 0: no pace", Pacer{Ratio: 3}, Last{End: t0, Took: 100 * ms}, t0, t0},
		{"negative time taken: no pace", p, Last{End: t0, Took: -ms}, t0, t0},
	} {
		if got := c.p.Start(c.last, c.now); !got.Equal(c.want) {
			t.Errorf("%s: Start(%v after t0 took %v, now t0+%v) = t0+%v, want t0+%v", c.name,
				c.last.End.Sub(t0), c.last.Took, c.now.Sub(t0), got.Sub(t0), c.want.Sub(t0))
		}
	}
}

// TestStartBoundsTheShareAndTheWait: over a burst of reconciles of any
// length, each started as soon as the rule allows, the reconciles take at
// most 1/(1+Ratio) of the time unless the bound cut the pause, and no change
// waits more than Bound.
func TestStartBoundsTheShareAndTheWait(t *testing.T) {
	p := Default
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, took := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second} {
		now, last, busy := t0, Last{End: t0, Took: took}, time.Duration(0) // one just ended
		for range 100 {
			at := p.Start(last, now) // a change arrives as the last reconcile ends
			if wait := at.Sub(now); wait > p.Bound {
				t.Fatalf("reconciles of %v: a change waited %v, over %v", took, wait, p.Bound)
			}
			now = at.Add(took)
			busy += took
			last = Last{End: now, Took: took}
		}
		share := float64(busy) / float64(now.Sub(t0))
		want := 1 / float64(1+p.Ratio)
		if bounded := float64(took) / float64(took+p.Bound); bounded > want {
			want = bounded
		}
		if share > want+1e-9 {
			t.Errorf("reconciles of %v took %.3f of the time, over %.3f", took, share, want)
		}
	}
}

// Check names the field out of bounds and its value; the bounds themselves
// and zero (unpaced) are accepted.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		p    Pacer
		want string
	}{
		{Default, ""},
		{Pacer{}, ""},
		{Pacer{Ratio: MaxRatio, Bound: MaxBound}, ""},
		{Pacer{Ratio: -1, Bound: time.Second}, "pace ratio -1: want 0 (unpaced) to 100"},
		{Pacer{Ratio: MaxRatio + 1}, "pace ratio 101: want 0 (unpaced) to 100"},
		{Pacer{Ratio: 3, Bound: -time.Millisecond}, "pace bound -1ms: want 0 (unpaced) to 10s"},
		{Pacer{Ratio: 3, Bound: MaxBound + time.Nanosecond}, "pace bound 10.000000001s: want 0 (unpaced) to 10s"},
	} {
		err := c.p.Check()
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

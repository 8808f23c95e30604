// Package pace decides when a reconcile that a change of the workload source
// asks for may start. In a burst (pods created by the hundred) the source
// changes faster than the agent reconciles, and every reconcile decides the
// whole node: run back to back they take a steady share of the CPUs the
// runtime and the kubelet need to start those very pods. The rule is a duty
// cycle with a bound: after a reconcile that took d, a paced one starts no
// sooner than Ratio·d after it ended, and a change never waits more than
// Bound for the pace. A node at rest is not paced at all: its last reconcile
// ended long ago.
//
// Pacer is the pure rule (the times are given); Gate carries it out on the
// agent's loop with a timer, and counts what it did.
package pace

import (
	"fmt"
	"time"
)

// Pacer is the rule.
type Pacer struct {
	// Ratio is the pause after a reconcile, in multiples of the time it
	// took: with 3, reconciles run back to back take at most a quarter
	// of the time, whatever a reconcile costs.
	Ratio int
	// Bound is the longest pause, so the longest a change waits for the
	// pace (beyond the reconcile it arrived during).
	Bound time.Duration
}

// Default is the agent's: reconciles paced to at most a quarter of a burst's
// time, and a change waiting at most a second. A second is the kubelet's own
// pace (its PLEG relists the containers every second), and what NRI's
// answer to a creation is bounded by: without NRI a container is pinned
// after its start by a reconcile, which this delays by at most that.
var Default = Pacer{Ratio: 3, Bound: time.Second}

// Of is *p, or Default when p is nil.
func Of(p *Pacer) Pacer {
	if p == nil {
		return Default
	}
	return *p
}

// The most an operator may set. A longer bound leaves a container started
// without NRI on the wrong CPUs for longer (it is pinned by a reconcile,
// which waits up to Bound); past a ratio of 100 every reconcile of a
// hundredth of the bound or more already pauses for the whole bound.
const (
	MaxRatio = 100
	MaxBound = 10 * time.Second
)

// Check says what is wrong with p, naming the field and its value; nil when
// nothing is. A Ratio of 0, or a Bound of 0, paces nothing.
func (p Pacer) Check() error {
	if err := CheckRatio(p.Ratio); err != nil {
		return fmt.Errorf("pace ratio %w", err)
	}
	if err := CheckBound(p.Bound); err != nil {
		return fmt.Errorf("pace bound %w", err)
	}
	return nil
}

// CheckRatio says what is wrong with a Ratio, starting with its value.
func CheckRatio(r int) error {
	if r < 0 || r > MaxRatio {
		return fmt.Errorf("%d: want 0 (unpaced) to %d", r, MaxRatio)
	}
	return nil
}

// CheckBound says what is wrong with a Bound, starting with its value.
func CheckBound(b time.Duration) error {
	if b < 0 || b > MaxBound {
		return fmt.Errorf("%s: want 0 (unpaced) to %s", b, MaxBound)
	}
	return nil
}

// Last is what the rule needs of the last reconcile.
type Last struct {
	End  time.Time     // when it ended
	Took time.Duration // how long it ran
}

// Start is when a reconcile asked for at now may start: now, unless the
// pause after last runs past now, and never later than Bound after now.
func (p Pacer) Start(last Last, now time.Time) time.Time {
	var pause time.Duration
	switch {
	case p.Ratio <= 0 || last.Took <= 0:
	case last.Took >= p.Bound/time.Duration(p.Ratio):
		pause = p.Bound
	default: // under the bound: Took·Ratio < Bound, no overflow
		pause = last.Took * time.Duration(p.Ratio)
	}
	at := last.End.Add(pause)
	switch {
	case !at.After(now):
		return now
	case at.After(now.Add(p.Bound)): // the last end after now: a clock stepped back
		return now.Add(p.Bound)
	}
	return at
}

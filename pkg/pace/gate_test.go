package pace

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time                   { return c.t }
func (c *fakeClock) step(d time.Duration)             { c.t = c.t.Add(d) }
func (c *fakeClock) reconcile(d time.Duration) func() { return func() { c.step(d) } }

func TestGate(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	reg := prometheus.NewRegistry()
	g := NewGate(Pacer{Ratio: 3, Bound: time.Second}, reg, clock.now)
	defer g.Stop()

	if !g.Changed() {
		t.Fatal("the first change waited: nothing ran before it")
	}
	g.Run(clock.reconcile(100 * time.Millisecond))
	// Right after a reconcile of 100 ms: wait until 300 ms after its end.
	if g.Changed() {
		t.Fatal("a change right after a reconcile ran at once")
	}
	if want := clock.t.Add(300 * time.Millisecond); !g.due.Equal(want) {
		t.Fatalf("due at %v, want %v", g.due, want)
	}
	// More changes while it waits keep the first one's time.
	clock.step(200 * time.Millisecond)
	if g.Changed() {
		t.Fatal("a second change ran at once while the first waited")
	}
	if want := clock.t.Add(100 * time.Millisecond); !g.due.Equal(want) {
		t.Fatalf("a second change moved the time to %v, want %v", g.due, want)
	}
	clock.step(100 * time.Millisecond)
	g.Run(clock.reconcile(50 * time.Millisecond))
	if got := testutil.ToFloat64(g.paced); got != 1 {
		t.Errorf("paced reconciles %v, want 1", got)
	}
	if got := testutil.ToFloat64(g.waited); got != 0.3 {
		t.Errorf("paced seconds %v, want 0.3", got)
	}
	// Another cause (a config change) reconciles at once: the waiting
	// change is served by it, and C does not fire for it.
	if g.Changed() {
		t.Fatal("a change right after a reconcile ran at once")
	}
	clock.step(10 * time.Millisecond)
	g.Run(clock.reconcile(time.Millisecond))
	if g.armed {
		t.Fatal("a reconcile left the change it served waiting")
	}
	if got := testutil.ToFloat64(g.paced); got != 2 {
		t.Errorf("paced reconciles %v, want 2", got)
	}
	// At rest, after the pause ran out: at once.
	clock.step(time.Second)
	if !g.Changed() {
		t.Fatal("a change after the pause ran out waited")
	}
}

// TestGateFires: C fires once the pause is over (the real timer; the fake
// clock only sets how long it is).
func TestGateFires(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	g := NewGate(Pacer{Ratio: 1, Bound: time.Second}, nil, clock.now)
	defer g.Stop()
	g.Run(clock.reconcile(time.Millisecond))
	if g.Changed() {
		t.Fatal("a change right after a reconcile ran at once")
	}
	select {
	case <-g.C():
	case <-time.After(time.Minute):
		t.Fatal("C did not fire a minute after a pause of 1 ms")
	}
}

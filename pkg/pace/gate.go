package pace

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Gate paces a loop's reconciles by a Pacer. The loop tells it of each
// change of the source (Changed), reconciles when Changed says so or C
// fires, and runs every reconcile, whatever woke it, through Run: any
// reconcile serves the changes waiting, since it reads the source afresh.
// Not safe for concurrent use: it is the loop's.
type Gate struct {
	p      Pacer
	now    func() time.Time
	timer  *time.Timer
	last   Last
	armed  bool      // a change waits for C
	since  time.Time // when the first change waiting arrived
	due    time.Time // when C fires, while armed
	paced  prometheus.Counter
	waited prometheus.Counter
}

// NewGate returns a gate pacing by p, its series registered in reg (nil:
// none), reading the time from now (nil: time.Now).
func NewGate(p Pacer, reg prometheus.Registerer, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	g := &Gate{p: p, now: now, timer: time.NewTimer(time.Hour),
		paced: prometheus.NewCounter(prometheus.CounterOpts{Name: "locus_reconciles_paced_total",
			Help: "Reconciles asked for by a change of the source that waited for the pace of a burst."}),
		waited: prometheus.NewCounter(prometheus.CounterOpts{Name: "locus_reconcile_paced_seconds_total",
			Help: "Time changes of the source waited for the pace of a burst, from the first change waiting to its reconcile."})}
	g.timer.Stop()
	if reg != nil {
		reg.MustRegister(g.paced, g.waited)
	}
	return g
}

// Changed is told of a change of the source: true when a reconcile may start
// now; false when it is to wait for C, which then fires once.
func (g *Gate) Changed() bool {
	if g.armed {
		return false // the first change waiting set when
	}
	now := g.now()
	at := g.p.Start(g.last, now)
	if !at.After(now) {
		return true
	}
	g.armed, g.since, g.due = true, now, at
	g.timer.Reset(at.Sub(now))
	return false
}

// C fires when the changes waiting may be reconciled.
func (g *Gate) C() <-chan time.Time { return g.timer.C }

// Run runs one reconcile and times it for the pause after; the changes
// waiting are served by it, and counted.
func (g *Gate) Run(reconcile func()) {
	start := g.now()
	if g.armed {
		g.timer.Stop()
		g.armed = false
		g.paced.Inc()
		g.waited.Add(max(0, start.Sub(g.since)).Seconds())
	}
	reconcile()
	end := g.now()
	g.last = Last{End: end, Took: end.Sub(start)}
}

// Stop releases the timer.
func (g *Gate) Stop() { g.timer.Stop() }

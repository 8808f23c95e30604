// Package idletrim hands the Go heap's free memory back to the operating
// system once a loop has been idle for a while.
//
// A reconcile allocates several MiB that die with it. The garbage collector
// lets the heap grow to about twice what is live before it collects, and the
// runtime's background scavenger returns only what lies beyond that goal, so
// a loop that works for a few milliseconds every few seconds keeps about
// twice its live heap resident while it waits. One forced collection and
// release (debug.FreeOSMemory) after a quiet spell brings the heap down to
// what is live, for the CPU of one collection. The first quiet spell also
// hands back the executable's pages that only start-up touched
// (PageOutExecutable).
package idletrim

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"
)

// Trimmer frees the heap's unused memory once no work has been reported for
// its quiet period, at most once per quiet spell.
type Trimmer struct {
	busy chan struct{}
}

// Start runs a Trimmer until ctx ends. It does nothing before the first
// Busy. log hears how the executable's pages went.
func Start(ctx context.Context, quiet time.Duration, log *slog.Logger) *Trimmer {
	first := true
	return start(ctx, quiet, func() {
		debug.FreeOSMemory()
		if first { // once: pages the loop faults back in are pages it keeps using
			first = false
			asked, err := PageOutExecutable()
			log.Debug("start-up pages of the executable handed back", "mappedBytes", asked, "err", err)
		}
	})
}

func start(ctx context.Context, quiet time.Duration, free func()) *Trimmer {
	t := &Trimmer{busy: make(chan struct{}, 1)}
	go t.run(ctx, quiet, free)
	return t
}

// Busy reports work just done: the next trim waits a quiet period from now.
// It never blocks.
func (t *Trimmer) Busy() {
	select {
	case t.busy <- struct{}{}:
	default: // one is pending already
	}
}

func (t *Trimmer) run(ctx context.Context, quiet time.Duration, free func()) {
	timer := time.NewTimer(quiet)
	timer.Stop() // armed by the first Busy
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.busy:
			timer.Reset(quiet)
		case <-timer.C:
			free()
		}
	}
}

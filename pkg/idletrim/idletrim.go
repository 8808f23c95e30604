// Package idletrim hands the Go heap's free memory back to the operating
// system once a loop has been idle for a while.
//
// A reconcile allocates several MiB that die with it. The garbage collector
// lets the heap grow to about twice what is live before it collects, and the
// runtime's background scavenger returns only what lies beyond that goal, so
// a loop that works for a few milliseconds every few seconds keeps about
// twice its live heap resident while it waits. One forced collection and
// release (debug.FreeOSMemory) after a quiet spell brings the heap down to
// what is live, for the CPU of one collection. The end of start-up (or the
// first quiet spell, if it comes first) also hands back the executable's
// pages that only start-up touched (PageOutExecutable).
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
	busy, startedUp chan struct{}
}

// Start runs a Trimmer until ctx ends. It does nothing before the first
// Busy or StartedUp. log hears how the executable's pages went.
func Start(ctx context.Context, quiet time.Duration, log *slog.Logger) *Trimmer {
	return start(ctx, quiet, debug.FreeOSMemory, func() {
		asked, err := PageOutExecutable()
		log.Debug("start-up pages of the executable handed back", "mappedBytes", asked, "err", err)
	})
}

// start runs free after each quiet spell, and pageOut once: at StartedUp or
// after the first quiet spell, whichever comes first. Pages the loop faults
// back in after that are pages it keeps using: paging them out again would
// only read them again.
func start(ctx context.Context, quiet time.Duration, free, pageOut func()) *Trimmer {
	t := &Trimmer{busy: make(chan struct{}, 1), startedUp: make(chan struct{}, 1)}
	go t.run(ctx, quiet, free, pageOut)
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

// StartedUp reports work just done, as Busy, which was the end of
// start-up: the executable's pages that only start-up touched are handed
// back now rather than at the first quiet spell, which a node whose pods
// keep changing may not give for minutes. It never blocks.
func (t *Trimmer) StartedUp() {
	t.Busy()
	select {
	case t.startedUp <- struct{}{}:
	default:
	}
}

func (t *Trimmer) run(ctx context.Context, quiet time.Duration, free, pageOut func()) {
	timer := time.NewTimer(quiet)
	timer.Stop() // armed by the first Busy
	defer timer.Stop()
	pagedOut := false
	pageOutOnce := func() {
		if !pagedOut {
			pagedOut = true
			pageOut()
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.busy:
			timer.Reset(quiet)
		case <-t.startedUp:
			pageOutOnce()
		case <-timer.C:
			free()
			pageOutOnce()
		}
	}
}

// Package memlimit keeps the agent's soft memory limit (debug.SetMemoryLimit)
// near what it needs: a floor that bounds the garbage collector's slack on a
// small node, raised with the live heap so that a large node never has its
// collector run continuously against a limit below what is live.
//
// Go's collector lets the heap grow to twice what is live before it
// collects (GOGC=100), and the runtime keeps what a collection freed until
// its scavenger hands it back: under a steady churn of pods the agent held
// about 40 MiB of anonymous memory for 12 MiB live. A limit of 32 MiB made it
// 28 MiB for the same work; a limit of 24 MiB, close to what a busy
// reconcile has live, made the collector run all the time (reconciles six
// times longer). So the limit is never less than twice the live heap:
// above the floor the collector runs as often as GOGC=100 would have it.
package memlimit

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// For is the soft limit for a live heap of live bytes: the floor, or twice
// what is live when that is more. Twice a live heap above 2^62 bytes cannot
// be asked for; it saturates.
func For(live, floor uint64) int64 {
	const most = 1 << 62
	limit := floor
	if live > limit/2 {
		limit = 2 * min(live, most/2)
	}
	return int64(min(limit, most))
}

// Follow sets the limit for the live heap now and again every period until
// ctx ends.
func Follow(ctx context.Context, floor uint64, every time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := func() {
		metrics.Read(sample)
		var live uint64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = sample[0].Value.Uint64()
		}
		debug.SetMemoryLimit(For(live, floor))
	}
	set()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				set()
			}
		}
	}()
}

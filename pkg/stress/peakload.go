package stress

import (
	"context"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// RunPeaks runs the peak load until p.Duration passes or ctx is done and
// measures each peak. Each thread spins until its own CPU time (not the
// wall clock) has grown by p.Work, so time spent throttled is not counted
// as work done.
func RunPeaks(ctx context.Context, p Peaks) (PeakSummary, error) {
	if err := p.Check(); err != nil {
		return PeakSummary{}, err
	}
	if p.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Duration)
		defer cancel()
	}
	start := time.Now()
	var lat []time.Duration
	tick := time.NewTicker(p.Every)
	defer tick.Stop()
	for {
		t0 := time.Now()
		var wg sync.WaitGroup
		for range p.Threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				spinCPU(p.Work)
			}()
		}
		wg.Wait()
		lat = append(lat, time.Since(t0))
		select {
		case <-ctx.Done():
			return Summarize(p, lat, time.Since(start)), nil
		case <-tick.C:
		}
	}
}

// spinCPU burns d of this thread's CPU time (of the wall clock, were the
// thread's CPU clock unreadable).
func spinCPU(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	now := threadCPU
	if _, ok := threadCPU(); !ok {
		start := time.Now()
		now = func() (time.Duration, bool) { return time.Since(start), true }
	}
	begin, _ := now()
	var x uint64
	for t, _ := now(); t-begin < d; t, _ = now() {
		for i := range uint64(20000) {
			x += i ^ x>>3
		}
	}
	spinSink.Add(x)
}

func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

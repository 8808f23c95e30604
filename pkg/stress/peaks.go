package stress

import (
	"fmt"
	"slices"
	"time"
)

// Peaks is a bursty load: every Every, Threads threads each spend Work of
// CPU time at once, as a request fanned out to a few workers does. Its
// average is Threads*Work/Every of a CPU, but each peak asks for Threads
// CPUs: under a CFS quota below that, a peak exhausts the period's quota
// and waits for the next period, unless the group may burst.
type Peaks struct {
	Threads  int
	Work     time.Duration // CPU time per thread per peak
	Every    time.Duration
	Duration time.Duration // 0: until the context is done
}

// Bounds on a peak load: far beyond a demonstration, short of a mistake.
const (
	maxPeakThreads = 256
	maxPeakWork    = 10 * time.Second
)

// Check says what is wrong with p, naming the flag.
func (p Peaks) Check() error {
	switch {
	case p.Threads < 1 || p.Threads > maxPeakThreads:
		return fmt.Errorf("--peaks %d: want 1..%d threads", p.Threads, maxPeakThreads)
	case p.Work <= 0 || p.Work > maxPeakWork:
		return fmt.Errorf("--peak-work %s: want more than 0 and at most %s", p.Work, maxPeakWork)
	case p.Every < p.Work:
		return fmt.Errorf("--peak-every %s: want at least --peak-work %s", p.Every, p.Work)
	case p.Duration < 0:
		return fmt.Errorf("--duration %s is negative", p.Duration)
	}
	return nil
}

// PeakSummary is what a peak run measured: the time from each peak's start
// until its last thread finished its work.
type PeakSummary struct {
	Peaks         int
	P50, P99, Max time.Duration
	Work          time.Duration // the CPU time each thread spent per peak
	Threads       int
	Elapsed       time.Duration
}

func (s PeakSummary) String() string {
	return fmt.Sprintf("ran %s: %d peak(s) of %d thread(s) x %s CPU: latency p50 %.1fms p99 %.1fms max %.1fms",
		s.Elapsed.Round(time.Millisecond), s.Peaks, s.Threads, s.Work, ms(s.P50), ms(s.P99), ms(s.Max))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Summarize gives the percentiles of the peaks' latencies (nearest rank).
func Summarize(p Peaks, lat []time.Duration, elapsed time.Duration) PeakSummary {
	s := PeakSummary{Peaks: len(lat), Work: p.Work, Threads: p.Threads, Elapsed: elapsed}
	if len(lat) == 0 {
		return s
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	rank := func(q int) time.Duration { return sorted[max(0, (len(sorted)*q+99)/100-1)] }
	s.P50, s.P99, s.Max = rank(50), rank(99), sorted[len(sorted)-1]
	return s
}

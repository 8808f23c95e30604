package locality

import "time"

// Hooks the guest benchmark sets to see where a migration's time goes; nil
// (no cost but a comparison) otherwise. They are not safe for concurrent
// migrations and only tests set them.
var (
	// traceCall sees every move_pages call: its page class, entries, base
	// pages and duration.
	traceCall func(class PageClass, entries, pages int, took time.Duration)
	// tracePhaseHook sees how long a phase (regions, assign, guard) took.
	tracePhaseHook func(name string, took time.Duration)
	// fixedBatch, when positive, sizes every call at that many base pages
	// whatever it takes, instead of the controller: the benchmark's calls of
	// many huge pages, to see what the workload waits for as calls grow.
	fixedBatch int
)

func tracePhase(name string, since time.Time) {
	if tracePhaseHook != nil {
		tracePhaseHook(name, time.Since(since))
	}
}

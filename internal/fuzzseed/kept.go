package fuzzseed

import (
	"runtime"
	"testing"
	"time"
)

// Kept runs parse and measures what its result keeps alive: the heap in
// use after a GC, less the heap before it, while the result is still
// referenced; and the time parse took. A test at a parser's cap fails when
// either is over its stated bound (CheckKept).
func Kept(parse func() any) (kept uint64, took time.Duration) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	result := parse()
	took = time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(result)
	if after.HeapAlloc > before.HeapAlloc {
		kept = after.HeapAlloc - before.HeapAlloc
	}
	return kept, took
}

// CheckKept measures parse with Kept, logs the figures, and fails t when
// it keeps more than maxKept bytes or takes longer than maxTook.
func CheckKept(t *testing.T, what string, maxKept uint64, maxTook time.Duration, parse func() any) {
	t.Helper()
	kept, took := Kept(parse)
	t.Logf("%s: %.2f MiB kept, %v", what, float64(kept)/(1<<20), took)
	if kept > maxKept {
		t.Errorf("%s kept %.2f MiB, more than %.2f MiB", what, float64(kept)/(1<<20), float64(maxKept)/(1<<20))
	}
	if took > maxTook {
		t.Errorf("%s took %v, more than %v", what, took, maxTook)
	}
}

package scale

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resetPeakRSS hands the memory the previous pass freed back to the system
// and restarts this process's peak resident set (VmHWM) from what is
// resident now, so that each pass's peak is its own and not the largest
// of the run.
func resetPeakRSS() {
	debug.FreeOSMemory()
	// "5" resets the peak RSS (Linux 4.0 and later); without it the peak
	// spans the run, which says so in the figures' caption.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is a process's peak resident set in bytes (VmHWM of
// /proc/<pid>/status), or 0 when it cannot be read.
func peakRSS(pid int) uint64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func mib(b uint64) string { return fmt.Sprintf("%.0fMiB", float64(b)/(1<<20)) }

// liveHeap is the Go heap this process holds after a full collection: the
// bytes of objects still reachable (runtime/metrics' heap objects, read
// right after runtime.GC). Unlike the peak RSS it does not count garbage
// waiting for the collector, freed spans not yet returned, or what the
// creators allocated in passing; it is what a scheduler keeps.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// heapProfile writes the heap profile of this process, as of the last
// collection, to $LOCUS_SCHED_MEMPROFILE/<name>.pprof when that directory
// is set: what the scheduler holds at the end of a pass, by allocation site.
func heapProfile(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("LOCUS_SCHED_MEMPROFILE")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

// settleHeap waits for what a stopped scheduler's goroutines (informers,
// queues, the framework's workers) still hold to become garbage, and
// returns the live heap then: a second reading equal within 1 MiB to the
// one before, or the last of ten a second apart.
func settleHeap() uint64 {
	prev := liveHeap()
	for range 10 {
		time.Sleep(time.Second)
		now := liveHeap()
		if now+(1<<20) > prev && prev+(1<<20) > now {
			return now
		}
		prev = now
	}
	return prev
}

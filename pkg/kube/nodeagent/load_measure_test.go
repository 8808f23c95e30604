package nodeagent_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// What the load run measures of the process and of the agent's metrics.

// usage is a process's resident memory and CPU time; anon and file (its
// RssAnon and RssFile) are read for the agent's own process only.
type usage struct {
	rss, hwm, anon, file int64
	cpu                  time.Duration
}

func sample() usage {
	var u usage
	if raw, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && (f[0] == "VmRSS:" || f[0] == "VmHWM:") {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				if f[0] == "VmRSS:" {
					u.rss = kb << 10
				} else {
					u.hwm = kb << 10
				}
			}
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return u
}

func heapInuse() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// histogram is locus_reconcile_duration_seconds as scraped: cumulative
// counts by upper bound.
type histogram struct {
	bounds []float64
	counts []float64
	count  float64
	sum    float64
}

func scrapeHistogram(t *testing.T, addr string) histogram {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var h histogram
	const name = "locus_reconcile_duration_seconds"
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(f[0], name+`_bucket{le="`):
			le := strings.TrimSuffix(strings.TrimPrefix(f[0], name+`_bucket{le="`), `"}`)
			b, err := strconv.ParseFloat(le, 64) // "+Inf" parses to +Inf
			if err != nil {
				t.Fatalf("metrics: bucket bound %q", le)
			}
			h.bounds, h.counts = append(h.bounds, b), append(h.counts, v)
		case f[0] == name+"_count":
			h.count = v
		case f[0] == name+"_sum":
			h.sum = v
		}
	}
	if h.bounds == nil {
		t.Fatalf("metrics at %s have no %s", addr, name)
	}
	return h
}

func (h histogram) minus(o histogram) histogram {
	d := histogram{bounds: h.bounds, counts: slices.Clone(h.counts), count: h.count - o.count, sum: h.sum - o.sum}
	for i := range d.counts {
		d.counts[i] -= o.counts[i]
	}
	return d
}

func (h histogram) mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(h.sum / h.count * float64(time.Second)).Round(10 * time.Microsecond)
}

// quantile is the upper bound of the bucket that holds the q-quantile: the
// histogram says no more than that.
func (h histogram) quantile(q float64) time.Duration {
	for i, c := range h.counts {
		if c >= q*h.count {
			return time.Duration(h.bounds[i] * float64(time.Second))
		}
	}
	return 0
}

// reconcileTimes is the agent's log handler in the load run: it keeps the
// duration of every reconcile, exactly (the "reconciled" debug line's took;
// the histogram's power-of-two buckets only bound it), and hands the
// records at next's level on to next. With trace set it also hands it the
// agent's events and each reconcile's line (its duration and writes): what
// each reconcile did, in order (LOCUS_LOAD_TRACE).
type reconcileTimes struct {
	next  slog.Handler
	trace slog.Handler
	mu    sync.Mutex
	took  []time.Duration
}

// sub shares its parent's durations, with attributes or a group of its own.
type sub struct {
	*reconcileTimes
	next slog.Handler
}

func (h *reconcileTimes) Enabled(context.Context, slog.Level) bool { return true }

func (h *reconcileTimes) Handle(ctx context.Context, r slog.Record) error {
	return h.handle(ctx, h.next, r)
}

func (h *reconcileTimes) handle(ctx context.Context, next slog.Handler, r slog.Record) error {
	if h.trace != nil && (r.Level >= slog.LevelInfo || r.Message == "reconciled") {
		h.trace.Handle(ctx, r.Clone()) // best effort: a trace for reading, not a measure
	}
	if r.Message == "reconciled" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "took" && a.Value.Kind() == slog.KindDuration {
				h.mu.Lock()
				h.took = append(h.took, a.Value.Duration())
				h.mu.Unlock()
			}
			return true
		})
		return nil
	}
	if !next.Enabled(ctx, r.Level) {
		return nil
	}
	return next.Handle(ctx, r)
}

func (h *reconcileTimes) WithAttrs(as []slog.Attr) slog.Handler {
	return sub{h, h.next.WithAttrs(as)}
}

func (h *reconcileTimes) WithGroup(g string) slog.Handler { return sub{h, h.next.WithGroup(g)} }

func (s sub) Handle(ctx context.Context, r slog.Record) error { return s.handle(ctx, s.next, r) }

func (s sub) WithAttrs(as []slog.Attr) slog.Handler {
	return sub{s.reconcileTimes, s.next.WithAttrs(as)}
}

func (s sub) WithGroup(g string) slog.Handler { return sub{s.reconcileTimes, s.next.WithGroup(g)} }

// count is how many reconciles were logged so far.
func (h *reconcileTimes) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.took)
}

// since is the durations of the reconciles logged after the first n.
func (h *reconcileTimes) since(n int) []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.took[n:])
}

func ms(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }

// cpuProfile profiles the test process's CPU into file until the returned
// function is called; with file "" it does nothing.
func cpuProfile(t *testing.T, file string) (stop func()) {
	t.Helper()
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
}

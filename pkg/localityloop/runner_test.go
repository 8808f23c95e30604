package localityloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/publish"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// The runner alone, on fakes; the agent's tests run it under reconciles.

type fakeCgroups struct {
	cpus map[string]string
	pids map[string][]int
}

func (f fakeCgroups) ReadKnob(rel string, k cgroup.Knob) (string, error) {
	if k != cgroup.CPUSetCPUs {
		return "", fmt.Errorf("unexpected knob %s", k)
	}
	c, ok := f.cpus[rel]
	if !ok {
		return "", errors.New("no such cgroup")
	}
	return c, nil
}

func (f fakeCgroups) Procs(rel string) ([]int, error) { return f.pids[rel], nil }

type event struct{ typ, reason, workload, msg string }

type fakeEvents struct {
	mu  sync.Mutex
	evs []event
}

func (f *fakeEvents) Emit(typ, reason, workload, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evs = append(f.evs, event{typ, reason, workload, fmt.Sprintf(format, args...)})
}

// allLocal moves 1000 pages from node 1 to node 0.
type allLocal struct {
	mu    sync.Mutex
	calls []locality.Request
	opts  locality.Options
}

func (m *allLocal) Migrate(_ context.Context, req locality.Request, opts locality.Options) (locality.Result, error) {
	m.mu.Lock()
	m.calls, m.opts = append(m.calls, req), opts
	m.mu.Unlock()
	return locality.Result{Local: []int{0}, Before: locality.NodePages{1: 1000}, After: locality.NodePages{0: 1000},
		Moved: 1000, LongestStall: 2 * time.Millisecond,
		Processes: []locality.ProcessResult{{PID: req.PIDs[0], Moved: []locality.Move{{From: 1, To: 0, Pages: 1000}}}}}, nil
}

func testRunner(t *testing.T, dir string, m Migrator, cg fakeCgroups) (*Runner, *fakeEvents, *Metrics, *int) {
	t.Helper()
	evs, metrics, wakes := &fakeEvents{}, NewMetrics(prometheus.NewRegistry()), new(int)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := New(Deps{Migrator: m, Cgroups: cg, Events: evs, Metrics: metrics, Log: log,
		Now: func() time.Time { return time.Date(2024, 2, 27, 10, 0, 0, 0, time.UTC) }, Wake: func() { *wakes++ },
		Load: func(file, _ string, v any) bool {
			raw, err := os.ReadFile(filepath.Join(dir, file))
			return err == nil && json.Unmarshal(raw, v) == nil
		},
		StateDir: dir, Options: locality.Options{Budget: 7 * time.Millisecond}})
	t.Cleanup(r.Stop)
	return r, evs, metrics, wakes
}

func TestRunnerRunsRecordsAndReports(t *testing.T) {
	dir := t.TempDir()
	cg := fakeCgroups{cpus: map[string]string{"pods/w": "1"}, pids: map[string][]int{"pods/w": {42}}}
	m := &allLocal{}
	r, evs, metrics, wakes := testRunner(t, dir, m, cg)
	target := Target{Name: "w", Containers: []workload.Container{{Name: "w", Cgroup: "pods/w"}}, CPUs: "1",
		Local: []int{0}, Nodes: []int{0, 1}, Settings: sloconfig.Locality{Policy: sloconfig.LocalityBestEffort}}
	for range 2 {
		r.Schedule([]Target{target}, time.Time{})
		r.Wait()
	}
	if len(m.calls) != 1 || m.calls[0].PIDs[0] != 42 || m.opts.Budget != 7*time.Millisecond {
		t.Fatalf("one-shot: calls %+v options %+v, want one for pid 42 with the budget", m.calls, m.opts)
	}
	want := "migrated memory from remote numa: 1 to local numa: 0, cur local memory ratio 100, rest remote memory pages 0"
	if len(evs.evs) != 1 || evs.evs[0] != (event{eventlog.Normal, locality.EventSuccess, "w", want}) || *wakes != 1 {
		t.Errorf("events %+v, wakes %d; want one %s and one wake", evs.evs, *wakes, locality.EventSuccess)
	}
	if s := r.Status("w"); s == nil || s.Reason != locality.EventSuccess || s.PagesMigrated != 1000 || s.LocalRatio == nil || *s.LocalRatio != 100 {
		t.Errorf("status %+v", s)
	}
	if got := testutil.ToFloat64(metrics.migrated.WithLabelValues(publish.WorkloadLabelValues("w")...)); got != 1000 {
		t.Errorf("pages migrated %v", got)
	}
	// A new runner reads the record: nothing runs again.
	m2 := &allLocal{}
	r2, _, _, _ := testRunner(t, dir, m2, cg)
	if rec := r2.Record("w"); rec == nil || rec.CPUs != "1" {
		t.Fatalf("record after a restart %+v", rec)
	}
	r2.Schedule([]Target{target}, time.Time{})
	r2.Wait()
	if len(m2.calls) != 0 {
		t.Errorf("a restarted runner migrated again: %+v", m2.calls)
	}
	// Out of the targets, the record and the series go.
	r2.Schedule(nil, time.Time{})
	if r2.Record("w") != nil || r2.Status("missing") != nil {
		t.Error("a workload no longer a target kept its record")
	}
}

func TestRunnerWaitsForTheCpuset(t *testing.T) {
	cg := fakeCgroups{cpus: map[string]string{"pods/w": "2"}, pids: map[string][]int{"pods/w": {42}}}
	m := &allLocal{}
	r, evs, _, _ := testRunner(t, t.TempDir(), m, cg)
	r.Schedule([]Target{{Name: "w", Containers: []workload.Container{{Name: "w", Cgroup: "pods/w"}}, CPUs: "1",
		Local: []int{0}, Nodes: []int{0, 1}, Settings: sloconfig.Locality{Policy: sloconfig.LocalityBestEffort}}}, time.Time{})
	r.Wait()
	if len(m.calls) != 0 || len(evs.evs) != 0 || r.Record("w") != nil {
		t.Errorf("a cpuset not in force: calls %+v events %+v", m.calls, evs.evs)
	}
}

func TestNilRunner(t *testing.T) {
	var r *Runner
	r.Stop()
	if r.Status("w") != nil || r.Record("w") != nil {
		t.Error("a nil runner has records")
	}
}

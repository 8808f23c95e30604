package localityloop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/atomicfile"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/status"
)

// File keeps, under the state directory, what the last memory locality run
// of each workload was, so that a restarted agent neither runs a one-shot
// migration again nor resets an interval.
const File = "memory-locality.json"

// Migrator moves a set of processes' remote memory to their local nodes;
// KernelMigrator on the real kernel, a fake in tests.
type Migrator interface {
	Migrate(ctx context.Context, req locality.Request, opts locality.Options) (locality.Result, error)
}

// KernelMigrator is locality.Migrate.
type KernelMigrator struct{}

func (KernelMigrator) Migrate(ctx context.Context, req locality.Request, opts locality.Options) (locality.Result, error) {
	return locality.Migrate(ctx, req, opts)
}

// Emitter records an Event (eventlog.Log).
type Emitter interface {
	Emit(typ, reason, workload, format string, args ...any)
}

// Cgroups reads what a run checks first: the cpuset in force and the
// processes of a container's cgroup (cgroup.Hierarchy).
type Cgroups interface {
	ReadKnob(rel string, k cgroup.Knob) (string, error)
	Procs(rel string) ([]int, error)
}

// Deps is what a Runner works with; every field is required.
type Deps struct {
	Migrator Migrator
	Cgroups  Cgroups
	Events   Emitter
	Metrics  *Metrics
	Log      *slog.Logger
	Now      func() time.Time
	// Wake asks for a reconcile, so status shows a run's result at once.
	Wake func()
	// Load reads a JSON record file of the state directory into v, saying
	// whether v holds it (what names it in the log); StateDir is where File
	// is saved.
	Load     func(file, what string, v any) bool
	StateDir string
	// Options are the migrations' roots, budget and margin.
	Options locality.Options
}

// Runner runs migrations one at a time, on a goroutine of its own, so a
// long migration never holds up a reconcile, and two migrations never
// compete for the same node's memory bandwidth and free pages.
type Runner struct {
	d    Deps
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup // the worker goroutine, while one runs

	mu      sync.Mutex
	records map[string]*Record
	queue   []string          // workloads waiting, oldest first
	pending map[string]Target // their latest targets
	running string            // the workload migrating now
	stopped bool
}

// New makes a runner with the records of File.
func New(d Deps) *Runner {
	ctx, stop := context.WithCancel(context.Background())
	r := &Runner{d: d, ctx: ctx, stop: stop, pending: map[string]Target{}}
	r.records = r.load()
	return r
}

// Status is the last run of a workload, nil if none is kept (or r is nil).
func (r *Runner) Status(name string) *status.LocalityStatus {
	if rec := r.Record(name); rec != nil {
		return &rec.Last
	}
	return nil
}

// Record is a copy of a workload's record, nil if none is kept (or r is
// nil).
func (r *Runner) Record(name string) *Record {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.records[name]; rec != nil {
		c := *rec
		return &c
	}
	return nil
}

// Stop cancels a running migration (it stops between two batches) and
// waits for the worker to end. Later schedules start no migration. A nil
// r does nothing.
func (r *Runner) Stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stopped = true
	r.queue = nil
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
}

// Wait waits for the worker, if one runs, to empty the queue.
func (r *Runner) Wait() { r.wg.Wait() }

// Schedule forgets the workloads that are no longer targets and queues the
// targets that are due and not already queued or running.
func (r *Runner) Schedule(targets []Target, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	live := map[string]bool{}
	for _, t := range targets {
		live[t.Name] = true
		if _, queued := r.pending[t.Name]; queued {
			r.pending[t.Name] = t
			continue
		}
		if t.Name != r.running && due(r.records[t.Name], t, now) {
			r.pending[t.Name] = t
			r.queue = append(r.queue, t.Name)
		}
	}
	forgot := false
	for name := range r.records {
		if !live[name] && name != r.running {
			delete(r.records, name)
			r.d.Metrics.forget(name)
			forgot = true
		}
	}
	for i := 0; i < len(r.queue); i++ {
		if !live[r.queue[i]] {
			delete(r.pending, r.queue[i])
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			i--
		}
	}
	if forgot {
		r.saveLocked()
	}
	if len(r.queue) > 0 && r.running == "" {
		r.running = r.queue[0] // claimed here, so a second schedule starts no second worker
		r.wg.Add(1)
		go r.work()
	}
}

// work runs the queue until it is empty or the agent stops.
func (r *Runner) work() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		if r.stopped || len(r.queue) == 0 {
			r.running = ""
			r.mu.Unlock()
			return
		}
		name := r.queue[0]
		r.queue = r.queue[1:]
		t := r.pending[name]
		delete(r.pending, name)
		r.running = name
		r.mu.Unlock()
		if r.run(t) {
			r.d.Wake() // status.json and /status show the result now, not at the next resync
		}
	}
}

// run migrates one target and records, reports and measures the result. It
// returns false, recording nothing, when there was nothing to run yet: no
// process, or a cpuset not in force (a write failed or is pending), or the
// agent stopping mid-run.
func (r *Runner) run(t Target) bool {
	start := r.d.Now()
	var runs []containerRun
	if t.Skip == "" {
		var ok bool
		if runs, ok = r.migrate(t); !ok {
			return false
		}
	}
	if r.ctx.Err() != nil {
		return false
	}
	end := r.d.Now()
	p := podOutcome(t, runs)
	cur := p.Report()
	r.mu.Lock()
	prev := r.records[t.Name]
	rec := &Record{CPUs: t.CPUs, Settings: t.Settings, Ran: start, Last: statusOf(p, runs, end)}
	if prev.sameSeries(t) {
		rec.Reported = prev.Reported
	}
	report := locality.ShouldReport(rec.Reported, cur)
	if report {
		rec.Reported = cur
	}
	r.records[t.Name] = rec
	r.saveLocked()
	r.mu.Unlock()
	if report {
		reason, msg := p.Event()
		typ := eventlog.Normal
		if reason == locality.EventFailed {
			typ = eventlog.Warning
		}
		r.d.Events.Emit(typ, reason, t.Name, "%s", msg)
	}
	r.d.Metrics.observe(t.Name, rec.Last, runs, t.Skip == "", end.Sub(start))
	return true
}

// migrate runs the migrator on every container, or reports that it could
// not start (see run).
func (r *Runner) migrate(t Target) ([]containerRun, bool) {
	pids := make([][]int, len(t.Containers))
	found := false
	for i, c := range t.Containers {
		cpus, err := r.d.Cgroups.ReadKnob(c.Cgroup, cgroup.CPUSetCPUs)
		if err != nil || cpus != t.CPUs {
			return nil, false
		}
		pids[i], _ = r.d.Cgroups.Procs(c.Cgroup)
		found = found || len(pids[i]) > 0
	}
	if !found {
		return nil, false
	}
	runs := make([]containerRun, len(t.Containers))
	for i, c := range t.Containers {
		runs[i].Name = c.Name
		runs[i].Result, runs[i].Err = r.d.Migrator.Migrate(r.ctx, locality.Request{PIDs: pids[i], Local: t.Local,
			Policy: t.Settings.Policy, Nodes: t.Nodes}, r.d.Options)
	}
	return runs, true
}

// load reads File; a missing or unreadable file starts afresh (at
// worst a one-shot migration runs once more, which moves nothing new).
func (r *Runner) load() map[string]*Record {
	out := map[string]*Record{}
	if !r.d.Load(File, "memory locality: the last runs", &out) {
		return map[string]*Record{}
	}
	return out
}

// saveLocked writes File atomically; r.mu is held. A failure is
// logged: the records in memory still hold.
func (r *Runner) saveLocked() {
	raw, err := json.MarshalIndent(r.records, "", "  ")
	if err == nil {
		err = atomicfile.Write(filepath.Join(r.d.StateDir, File), append(raw, '\n'), 0o600)
	}
	if err != nil {
		r.d.Log.Warn("memory locality: cannot save the last runs", "err", fmt.Errorf("%s: %w", File, err))
	}
}

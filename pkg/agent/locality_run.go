package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/atomicfile"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/workload"
)

// LocalityFile keeps, under the state directory, what the last memory
// locality run of each workload was, so that a restarted agent neither runs
// a one-shot migration again nor resets an interval.
const LocalityFile = "memory-locality.json"

// memoryMigrator moves a set of processes' remote memory to their local
// nodes; locality.Migrate on the real kernel, a fake in tests.
type memoryMigrator interface {
	Migrate(ctx context.Context, req locality.Request, opts locality.Options) (locality.Result, error)
}

type kernelMigrator struct{}

func (kernelMigrator) Migrate(ctx context.Context, req locality.Request, opts locality.Options) (locality.Result, error) {
	return locality.Migrate(ctx, req, opts)
}

// localityRunner runs migrations one at a time, on a goroutine of its own,
// so a long migration never holds up a reconcile, and two migrations never
// compete for the same node's memory bandwidth and free pages.
type localityRunner struct {
	a        *Agent
	migrator memoryMigrator
	ctx      context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup // the worker goroutine, while one runs

	mu      sync.Mutex
	records map[string]*localityRecord
	queue   []string                  // workloads waiting, oldest first
	pending map[string]localityTarget // their latest targets
	running string                    // the workload migrating now
	stopped bool
}

func newLocalityRunner(a *Agent, m memoryMigrator) *localityRunner {
	ctx, stop := context.WithCancel(context.Background())
	r := &localityRunner{a: a, migrator: m, ctx: ctx, stop: stop, pending: map[string]localityTarget{}}
	r.records = r.load()
	return r
}

// scheduleLocality is the reconcile's step for memory locality, once the
// cgroups are written: it reports bad annotations as the workloads'
// problems and queues the migrations that are due. Under --once and
// --dry-run nothing runs: a migration outlives a single reconcile.
func (a *Agent) scheduleLocality(cfg *workload.Config, rs []resolved, d decide.Desired) {
	ws := make([]workload.Workload, len(rs))
	for i := range rs {
		ws[i] = rs[i].plan
	}
	targets, probs := localityTargets(ws, d.Workloads, cfg.Locality, memoryNodes(a.topo))
	// A workload the NUMA balancer settled has a node of its own after all:
	// the balancer's target replaces the skipped one.
	bal := a.balancerTargets()
	targets = slices.DeleteFunc(targets, func(t localityTarget) bool {
		return t.Skip != "" && slices.ContainsFunc(bal, func(b localityTarget) bool { return b.Name == t.Name })
	})
	targets = append(targets, bal...)
	for _, p := range probs {
		for i := range rs {
			if rs[i].spec.Name == p.Workload {
				rs[i].problems = append(rs[i].problems, p)
			}
		}
	}
	if a.opts.DryRun || a.opts.Once {
		return
	}
	if a.loc == nil {
		a.loc = newLocalityRunner(a, kernelMigrator{})
	}
	a.loc.schedule(targets, a.now())
}

// localityStatus is the last run of a workload, nil if none is kept.
func (a *Agent) localityStatus(name string) *LocalityStatus {
	if a.loc == nil {
		return nil
	}
	a.loc.mu.Lock()
	defer a.loc.mu.Unlock()
	if rec := a.loc.records[name]; rec != nil {
		s := rec.Last
		return &s
	}
	return nil
}

// stopLocality cancels a running migration (it stops between two batches)
// and waits for the worker to end. Later reconciles start no migration.
func (a *Agent) stopLocality() {
	if a.loc == nil {
		return
	}
	a.loc.mu.Lock()
	a.loc.stopped = true
	a.loc.queue = nil
	a.loc.mu.Unlock()
	a.loc.stop()
	a.loc.wg.Wait()
}

// schedule forgets the workloads that are no longer targets and queues the
// targets that are due and not already queued or running.
func (r *localityRunner) schedule(targets []localityTarget, now time.Time) {
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
		if t.Name != r.running && localityDue(r.records[t.Name], t, now) {
			r.pending[t.Name] = t
			r.queue = append(r.queue, t.Name)
		}
	}
	forgot := false
	for name := range r.records {
		if !live[name] && name != r.running {
			delete(r.records, name)
			r.a.metrics.locality.forget(name)
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
func (r *localityRunner) work() {
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
			r.a.wake(0) // status.json and /status show the result now, not at the next resync
		}
	}
}

// run migrates one target and records, reports and measures the result. It
// returns false, recording nothing, when there was nothing to run yet: no
// process, or a cpuset not in force (a write failed or is pending), or the
// agent stopping mid-run.
func (r *localityRunner) run(t localityTarget) bool {
	start := r.a.now()
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
	end := r.a.now()
	p := podOutcome(t, runs)
	cur := p.Report()
	r.mu.Lock()
	prev := r.records[t.Name]
	rec := &localityRecord{CPUs: t.CPUs, Settings: t.Settings, Ran: start, Last: localityStatusOf(p, runs, end)}
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
		r.a.events.Emit(typ, reason, t.Name, "%s", msg)
	}
	r.a.metrics.locality.observe(t.Name, rec.Last, runs, t.Skip == "", end.Sub(start))
	return true
}

// migrate runs the migrator on every container, or reports that it could
// not start (see run).
func (r *localityRunner) migrate(t localityTarget) ([]containerRun, bool) {
	pids := make([][]int, len(t.Containers))
	found := false
	for i, c := range t.Containers {
		cpus, err := r.a.h.ReadKnob(c.Cgroup, cgroup.CPUSetCPUs)
		if err != nil || cpus != t.CPUs {
			return nil, false
		}
		pids[i], _ = r.a.h.Procs(c.Cgroup)
		found = found || len(pids[i]) > 0
	}
	if !found {
		return nil, false
	}
	opts := locality.Options{ProcRoot: r.a.opts.ProcRoot, SysfsRoot: r.a.opts.SysfsRoot,
		Budget: r.a.opts.LocalityBudget, Margin: r.a.opts.LocalityMargin}
	runs := make([]containerRun, len(t.Containers))
	for i, c := range t.Containers {
		runs[i].Name = c.Name
		runs[i].Result, runs[i].Err = r.migrator.Migrate(r.ctx, locality.Request{PIDs: pids[i], Local: t.Local,
			Policy: t.Settings.Policy, Nodes: t.Nodes}, opts)
	}
	return runs, true
}

// load reads LocalityFile; a missing or unreadable file starts afresh (at
// worst a one-shot migration runs once more, which moves nothing new).
func (r *localityRunner) load() map[string]*localityRecord {
	out := map[string]*localityRecord{}
	if !r.a.loadRecord(LocalityFile, "memory locality: the last runs", &out) {
		return map[string]*localityRecord{}
	}
	return out
}

// saveLocked writes LocalityFile atomically; r.mu is held. A failure is
// logged: the records in memory still hold.
func (r *localityRunner) saveLocked() {
	raw, err := json.MarshalIndent(r.records, "", "  ")
	if err == nil {
		err = atomicfile.Write(filepath.Join(r.a.opts.StateDir, LocalityFile), append(raw, '\n'), 0o600)
	}
	if err != nil {
		r.a.log.Warn("memory locality: cannot save the last runs", "err", fmt.Errorf("%s: %w", LocalityFile, err))
	}
}

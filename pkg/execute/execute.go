// Package execute is the agent's one executor: it carries a decision out on
// the host. It takes the writes and restores of a decide.Ready and has
// pkg/cgroup plan and execute them, sets core scheduling cookies after the
// writes, and undoes what was done for a workload no longer managed
// (stopping its process, restoring its files, removing its cgroups). Under
// its one dry-run switch it prints what it would do and changes nothing.
// It reports what happened; the agent tells the rest.
package execute

import (
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/coresched"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// Emitter records an Event (eventlog.Log).
type Emitter interface {
	Emit(typ, reason, workload, format string, args ...any)
}

// Stopper stops a process a workload's command runs (supervisor.Supervisor).
type Stopper interface {
	Stop(p state.Process) error
}

// Config is what an Executor works with; every field but Core is required.
type Config struct {
	// Hierarchy is written keeping originals in Originals, by the
	// executor's own writer (only the executor holds one), which plans
	// only under DryRun; BetweenBatches, when set, runs between the
	// batches of one Apply (crash tests widen the window with it).
	Hierarchy      *cgroup.Hierarchy
	Originals      cgroup.OriginalStore
	BetweenBatches func()
	// Created, when set, is the store the writer records in: Originals
	// with the cgroups Locus created kept in a file of their own too
	// (cgroup.Created), so a lost originals file does not leave them
	// behind.
	Created cgroup.OriginalStore
	// OriginalsFile is the name of the originals checkpoint in Store's
	// directory, for the messages about it.
	OriginalsFile string
	Store         state.State // the checkpoint; read-only under DryRun
	Procs         procfs.FS
	Stopper       Stopper
	Events        Emitter
	Log           *slog.Logger
	// Writes counts the cgroup files written; Unsupported is set to 1 for
	// each knob the kernel lacks.
	Writes      prometheus.Counter
	Unsupported *prometheus.GaugeVec
	// Core sets core scheduling cookies; nil: the kernel's (coresched).
	Core CoreScheduler
	// Pods: the workloads are pods, whose containers are cgroups of their
	// own below the pod's.
	Pods bool
	// DryRun prints to Out what would be done and changes nothing.
	DryRun bool
	Out    io.Writer
	// Recheck: files confirmed to hold their decided value are read again
	// only after Recheck/2 to Recheck, or at once in a cgroup directory
	// created anew at the same path (confirm.go); 0: every file on every
	// Apply.
	Recheck time.Duration
	// StatusRecheck is Recheck for the files only the status reads (no
	// decision writes them: what it shows beside the values in force),
	// default 6 × Recheck. They need no repair, and at rest their re-reads
	// were a third of the agent's work: ten files per workload per resync.
	StatusRecheck time.Duration
	// Now is the clock of Recheck; default time.Now.
	Now func() time.Time
}

// Executor carries decisions out. It is used from one goroutine at a time
// (the agent's reconcile loop).
type Executor struct {
	c     Config
	w     *cgroup.Writer
	early *Early

	unsupported      cgroup.UnsupportedTracker
	unsupportedKnobs []string

	// coreSupport: whether the kernel has core scheduling; isolated: the
	// workloads given a cookie (kept in the checkpoint too; isolatedLoaded:
	// read from it).
	coreSupport         coresched.Support
	coreToldUnavailable bool
	isolated            map[string]bool
	isolatedLoaded      bool

	// containers names the container cgroups of pods (Targets.Containers
	// of the last Apply), for the events.
	containers map[string]string
	// moved maps the workloads the decision applied moved to those
	// admitted on the CPUs they leave (applyMovedFirst).
	moved map[string][]string

	// confirmed and reads: the files trusted until their recheck.
	confirmed map[string]map[cgroup.Knob]confirmation
	reads     *readCache
	applies   uint64 // the writes carried out so far (write), naming the last
	// ds and todo: write's scratch, reused (write).
	ds   dirs
	todo []cgroup.Op

	// pooled: the files the last Apply left holding a pool's value
	// (poolmove.go).
	pooled map[cgroup.Target]pooledFile
}

// New builds an Executor and its writers; it probes core scheduling once.
func New(c Config) (*Executor, error) {
	if c.Core == nil {
		c.Core = kernelCoreSched{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	records := c.Originals
	if c.Created != nil {
		records = c.Created
	}
	w, err := cgroup.NewWriter(c.Hierarchy, records)
	if err != nil {
		return nil, err
	}
	w.DryRun, w.BetweenBatches = c.DryRun, c.BetweenBatches
	early, err := NewEarly(c.Hierarchy, c.Originals, c.DryRun)
	if err != nil {
		return nil, err
	}
	return &Executor{c: c, w: w, early: early, coreSupport: c.Core.Probe(), isolated: map[string]bool{},
		confirmed: map[string]map[cgroup.Knob]confirmation{}, reads: &readCache{}}, nil
}

// Early is the executor's path for the new containers of decided pods,
// between two reconciles.
func (e *Executor) Early() *Early { return e.early }

// EnsureCgroup creates a workload's cgroup and its missing ancestors, as a
// standalone workload's preparation asks.
func (e *Executor) EnsureCgroup(rel string) ([]string, error) { return e.w.EnsureCgroup(rel) }

// AddProcs moves processes into a workload's cgroup: those a standalone
// workload adopts (its match rules).
func (e *Executor) AddProcs(rel string, pids []int) (cgroup.ProcsReport, error) {
	return e.w.AddProcs(rel, pids)
}

// Report is what carrying out did.
type Report struct {
	Writes  int                // cgroup files written
	Planned []cgroup.FileWrite // DryRun: the writes it would make
	Errors  []error            // failed writes
	// Seen is what the files read or written hold afterwards (Apply only);
	// what the files it trusted hold, the executor's Reader adds.
	Seen ReadBack
	// restored: the files given to the writer to restore; written: the
	// files it wrote; failed: the owners whose writes failed or found
	// their cgroup gone.
	restored, written []cgroup.Target
	failed            map[string]bool
	// movesFailed: the moved workloads whose writes failed, and the
	// problems that tells (moved.go).
	movesFailed  map[string]error
	moveProblems []workload.Problem
}

// Failed says whether writes of the workload (or the cgroup no workload
// owns) named failed, or found its cgroup gone.
func (r Report) Failed(name string) bool { return r.failed[name] }

// containerPrefix is "name:" for a container's cgroup, "" for a workload's.
func (e *Executor) containerPrefix(cg string) string {
	if c := e.containers[cg]; c != "" {
		return c + ":"
	}
	return ""
}

// Apply carries out a decision: its writes and restores, subtree by
// subtree, then its core isolation.
func (e *Executor) Apply(rd decide.Ready, t Targets) Report {
	ops, restores := rd.Writes()
	t.Owner = ownBalanced(t.Owner, rd.Desired)
	if e.c.DryRun {
		e.printUncreated(rd.Desired.Ops, t.Uncreated)
	}
	e.containers, e.moved = t.Containers, movesOf(rd.Desired.Moves)
	rep := e.write(ops, restores, t.Owner)
	e.undoFailedMoves(rd.Desired.Moves, t.Previous, &rep)
	e.applyCoreIsolation(rd.Desired.Workloads, t.Cgroups)
	if err := e.FlushOriginals(); err != nil {
		rep.Errors = append(rep.Errors, err)
	}
	return rep
}

// Close saves what FlushOriginals saves, as the agent stops; a failure is
// logged (the pods' marks give those originals back after a restart).
func (e *Executor) Close() {
	if err := e.FlushOriginals(); err != nil {
		e.c.Log.Warn("originals of new containers not saved", "err", err)
	}
}

// FlushOriginals saves the originals that the new containers' early writes
// kept in memory (cgroup.FileStore.Covered): once a reconcile, not once a
// container. A nil Executor (an agent that never started) has none.
func (e *Executor) FlushOriginals() error {
	if e == nil || e.c.DryRun {
		return nil
	}
	if f, ok := e.c.Originals.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// write carries out the writes and restores, but those of files confirmed
// lately (confirm.go), whose text it reports as seen.
func (e *Executor) write(ops []cgroup.Op, restores []cgroup.Target, owner map[string]string) Report {
	var rep Report
	e.applies++
	now := e.c.Now()
	// The directories looked at and the ops left are kept for the next
	// write, emptied: made anew for each, they were as many bytes as the
	// ops themselves at every reconcile. Nothing holds them past write.
	if e.ds == nil {
		e.ds = dirs{}
	}
	clear(e.ds)
	ds := e.ds
	todo := e.skipConfirmed(ops, now, ds)
	marks := poolMarks(ops)
	rep.Seen = e.writeBatches(batches(todo, restores), owner, marks, &rep)
	if !e.c.DryRun {
		e.rememberPooled(marks, rep.Seen)
	}
	e.confirm(todo, ops, rep.Seen, ds, now)
	e.forgetRestored(rep.restored, rep.written)
	e.reads.prune(owner)
	return rep
}

// Unsupported lists the knobs the kernel lacks, as found so far.
func (e *Executor) Unsupported() []string {
	return append([]string(nil), e.unsupportedKnobs...)
}

// CoreSupport says whether the kernel has core scheduling, and why not.
func (e *Executor) CoreSupport() coresched.Support { return e.coreSupport }

// Isolated says whether the workload's processes have a cookie of their own.
func (e *Executor) Isolated(workload string) bool { return e.isolated[workload] }

func (e *Executor) alive(p *state.Process) bool {
	return p != nil && e.c.Procs.Alive(p.PID, p.StartTime)
}

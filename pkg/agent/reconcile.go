package agent

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// Result is what one reconcile did.
type Result struct {
	Writes   int                // cgroup files written
	Planned  []cgroup.FileWrite // --dry-run: the writes it would make
	Errors   []error            // failed writes or state updates
	Problems []workload.Problem // workloads it could not fully serve
}

// Reconcile brings the node to the config once: it removes workloads no
// longer configured, prepares the others (cgroups, processes), decides CPUs
// and memory QoS, saves the decision, then writes cgroups. At rest, with
// nothing changed, it reads files and writes none: not the checkpoint, not
// the originals, not status.json.
func (a *Agent) Reconcile() Result {
	start, at := time.Now(), [2]time.Duration{} // when the decision and the writes ended
	var res Result
	a.health.Begin()
	defer func() {
		a.health.End(res.Errors)
		took := time.Since(start)
		a.metrics.Duration.Observe(took.Seconds())
		a.log.Debug("reconciled", "took", took, "writes", res.Writes, "decided", at[0], "applied", at[1])
		if len(res.Errors) > 0 {
			a.metrics.Errors.Inc()
		}
	}()
	// Every cgroup directory is resolved and checked to be inside the root
	// once per reconcile, not once per file.
	defer a.h.Scope()()
	defer a.events.Hold()()
	if err := a.refreshTopology(); err != nil {
		a.log.Warn("topology", "err", err) // keep the last one
	}
	a.kube.Refresh(a.opts.Kubelet, a.log)
	cfg, rs := a.loadWorkloads()
	ck, err := a.store.Load()
	if errors.Is(err, state.ErrCorrupt) {
		ck, err = a.exec.RebuildCheckpoint(err, cgroupsOfResolved(rs))
	}
	if err != nil {
		res.Errors = append(res.Errors, err)
		return res
	}
	keep, byName := map[string]bool{}, map[string]*resolved{}
	for i := range rs {
		keep[rs[i].cgroup], byName[rs[i].spec.Name] = true, &rs[i]
	}
	gone := map[string]state.Workload{}
	for name, w := range ck.Workloads {
		if r, ok := byName[name]; !ok || r.cgroup != w.Cgroup {
			gone[name] = w
		}
	}
	removal, failed := a.exec.RemoveAll(gone, keep) // in one pass: pods go in bursts
	res.add(removal)
	for _, name := range slices.Sorted(maps.Keys(failed)) {
		res.Errors = append(res.Errors, failed[name])
		a.events.Emit(eventlog.Warning, "RemoveFailed", name, "%v; retrying on the next reconcile", failed[name])
	}
	if len(gone) > 0 { // a dry run's read-only store reads back what it read
		if ck, err = a.store.Load(); err != nil {
			res.Errors = append(res.Errors, err)
			return res
		}
	}
	a.recordIntent(rs, ck)

	ready := map[string]bool{}
	for i := range rs {
		r := &rs[i]
		entry, ok := ck.Workloads[r.spec.Name]
		if ok && entry.Cgroup != r.cgroup {
			r.problems = append(r.problems, workload.Problem{Workload: r.spec.Name, Reason: "RemovalPending",
				Message: fmt.Sprintf("its previous cgroup %s is not removed yet", entry.Cgroup)})
			continue
		}
		if !ok {
			entry = state.Workload{Cgroup: r.cgroup}
		}
		ok, probs := a.prepare(r, &entry)
		ready[r.cgroup] = ok
		source.MarkContainers(r.plan, ready)
		r.problems = append(r.problems, probs...)
		ck.Workloads[r.spec.Name] = entry
	}
	a.started = a.started[:0]
	for _, name := range slices.Sorted(maps.Keys(ck.Workloads)) {
		if p := ck.Workloads[name].Started; p != nil {
			a.started = append(a.started, *p)
		}
	}

	a.balanced = a.balance(rs)
	// The plans are copied once per reconcile: a workload is a large value.
	ws := plans(rs)
	rd, err := a.decide(cfg, rs, ws, ready, ck)
	if err != nil {
		res.Errors = append(res.Errors, err)
		return res
	}
	at[0] = time.Since(start)
	a.emit(rd.Events)
	d := rd.Desired
	if a.src != nil {
		a.src.Reconciled(a.topo, d)
	}
	a.debugDelay()

	t := execute.TargetsOf(ws)
	t.Uncreated, t.Previous = uncreated(rs, ready), ck.Assignments
	rep := a.exec.Apply(rd, t)
	at[1] = time.Since(start)
	res.add(rep)
	a.metrics.Moves.Add(float64(len(rd.Desired.Moves) - len(rep.FailedMoves())))
	rd.Memory = rd.Memory.Unmoved(rep.FailedMoves())

	// The locality runner adds the problems it finds to rs.
	found := make([]int, len(rs))
	for i := range rs {
		found[i] = len(rs[i].problems)
	}
	a.scheduleLocality(cfg, rs, ws, d, rd.Memory.Followed(), rep.Failed)
	late := rep.MoveProblems()
	for i := range rs {
		late = append(late, rs[i].problems[found[i]:]...)
	}
	rd = rd.Later(late)
	a.mem = rd.Memory
	a.emit(rd.Warnings)
	res.Problems = rd.Problems
	if !a.opts.DryRun {
		st := a.buildStatus(rs, d, ck, ready, rep.Seen, rd.Problems)
		if err := a.pub.Publish(st); err != nil {
			res.Errors = append(res.Errors, fmt.Errorf("write status: %w", err))
		}
	}
	return res
}

// add counts what the executor did.
func (res *Result) add(rep execute.Report) {
	res.Writes += rep.Writes
	res.Planned = append(res.Planned, rep.Planned...)
	res.Errors = append(res.Errors, rep.Errors...)
}

// recordIntent saves, in one checkpoint update, an entry for every workload
// the checkpoint does not know yet, before anything is done for it: a crash
// then still knows to clean up.
func (a *Agent) recordIntent(rs []resolved, ck state.Checkpoint) {
	ws := make(map[string]state.Workload, len(rs))
	for _, r := range rs {
		ws[r.spec.Name] = state.Workload{Cgroup: r.cgroup}
	}
	if err := a.store.Intend(ck, ws); err != nil {
		a.log.Error("cannot save checkpoint", "err", err) // the next reconcile records them again
	}
}

// cgroupsOfResolved is the cgroup of each workload configured.
func cgroupsOfResolved(rs []resolved) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.cgroup
	}
	return out
}

// uncreated are the cgroups a real run creates before writing them: those
// of command and match workloads not prepared yet.
func uncreated(rs []resolved, ready map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		if (r.source == FromCommand || r.source == FromMatch) && !ready[r.cgroup] {
			out[r.cgroup] = true
		}
	}
	return out
}

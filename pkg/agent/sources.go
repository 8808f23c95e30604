package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/supervisor"
	"github.com/locus-project/locus/pkg/workload"
)

// prepare makes a workload's processes exist in its cgroup: it checks a
// `cgroup:` workload's cgroup, creates the cgroup of `command:` and `match:`
// workloads, starts or re-adopts the command, moves matching processes. It
// returns problems (the workload keeps its decision but is not written) and
// whether the cgroup is there to be written.
func (a *Agent) prepare(r *resolved, entry *state.Workload) (ready bool, probs []workload.Problem) {
	problem := func(reason, format string, args ...any) {
		probs = append(probs, workload.Problem{Workload: r.spec.Name, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	if r.source == FromPod && (r.plan.Terminating || !a.cgroupExists(r.cgroup)) {
		// The source lists a pod only while its cgroup exists: one missing
		// now was removed since (the pod is going away), and a terminating
		// pod is written no more. Neither is a problem; the source drops
		// the pod at its next look once its cgroup is gone.
		return false, probs
	}
	if r.source == FromCgroup || r.source == FromPod {
		if !a.cgroupExists(r.cgroup) {
			problem("CgroupNotFound", "cgroup %s does not exist under %s; nothing written", r.cgroup, a.h.Root())
			return false, probs
		}
		return true, probs
	}
	if r.source == FromCommand && a.opts.Once && !a.procAlive(entry.Started) && len(a.sup.Find(r.spec.Name)) == 0 {
		problem("NotStarted", "not started under --once")
		return false, probs
	}
	if a.opts.DryRun {
		exists := a.cgroupExists(r.cgroup)
		if !exists {
			fmt.Fprintf(a.opts.Out, "create cgroup %s\n", r.cgroup)
		}
		if r.source == FromCommand && !a.procAlive(entry.Started) && len(a.sup.Find(r.spec.Name)) == 0 {
			fmt.Fprintf(a.opts.Out, "start %s: %s\n", r.spec.Name, strings.Join(r.spec.Command, " "))
		}
		if r.source == FromMatch && exists {
			if err := a.matchProcesses(r); err != nil {
				problem("MatchFailed", "%v", err)
			}
		}
		return exists, probs
	}
	created, err := a.w.EnsureCgroup(r.cgroup)
	if len(created) > 0 {
		entry.Created = true
		a.saveEntry(r.spec.Name, *entry)
	}
	if err != nil {
		problem("CgroupCreateFailed", "%v", err)
		return false, probs
	}
	switch r.source {
	case FromCommand:
		if p := a.ensureCommand(r, entry); p != nil {
			probs = append(probs, *p)
		}
	case FromMatch:
		if err := a.matchProcesses(r); err != nil {
			problem("MatchFailed", "%v", err)
		}
	}
	return true, probs
}

// cgroupExists checks the cgroup in the hierarchy that holds cpusets (v1)
// or the unified one (v2).
func (a *Agent) cgroupExists(rel string) bool { return a.h.Exists(cgroup.CPUSet, rel) }

func (a *Agent) procAlive(p *state.Process) bool {
	return p != nil && a.procs.Alive(p.PID, p.StartTime)
}

// ensureCommand keeps exactly one process running the workload's command:
// the recorded one if it still runs the same command, else one found by its
// environment (an agent killed before it recorded the start), else a new one,
// after a backoff if the previous one exited.
func (a *Agent) ensureCommand(r *resolved, entry *state.Workload) *workload.Problem {
	name, now := r.spec.Name, time.Now()
	spec := supervisor.SpecHash(r.cgroup, r.spec.Command)
	if p := entry.Started; p != nil {
		switch {
		case !a.procAlive(p):
			delay, why := a.sup.Exited(name, now)
			a.events.Emit(eventlog.Warning, "WorkloadExited", name, "process %d exited (%s); restarting in %s", p.PID, why, delay)
		case specChanged(a.sup, p.PID, spec):
			a.events.Emit(eventlog.Normal, "CommandChanged", name, "command or cgroup changed: stopping process %d", p.PID)
			if err := a.sup.Stop(*p); err != nil {
				return &workload.Problem{Workload: name, Reason: "StopFailed", Message: err.Error()}
			}
		default:
			a.sup.Adopted(name, now)
			return nil
		}
		entry.Started = nil
		a.saveEntry(name, *entry)
	}
	for i, o := range a.sup.Find(name) {
		if i == 0 && o.Spec == spec {
			p := o.Process
			entry.Started = &p
			a.saveEntry(name, *entry)
			a.sup.Adopted(name, now)
			a.events.Emit(eventlog.Normal, "WorkloadAdopted", name, "process %d is already running the command", p.PID)
			continue
		}
		a.events.Emit(eventlog.Warning, "DuplicateStopped", name, "stopping process %d: another process runs this workload or its command changed", o.PID)
		if err := a.sup.Stop(o.Process); err != nil {
			return &workload.Problem{Workload: name, Reason: "StopFailed", Message: err.Error()}
		}
	}
	if entry.Started != nil {
		return nil
	}
	if wait := a.sup.WaitFor(name, now); wait > 0 {
		a.wake(wait)
		// A stable message: the problem is reported once, not at every tick.
		return &workload.Problem{Workload: name, Reason: "BackOff", Message: "the process exited; restarting after a backoff"}
	}
	p, err := a.sup.Start(name, r.cgroup, r.spec.Command)
	if err != nil {
		return &workload.Problem{Workload: name, Reason: "StartFailed", Message: err.Error()}
	}
	a.debugDelay() // the window a crash test aims at: started, not yet recorded
	entry.Started = &p
	a.saveEntry(name, *entry)
	a.events.Emit(eventlog.Normal, "WorkloadStarted", name, "started process %d: %s", p.PID, strings.Join(r.spec.Command, " "))
	return nil
}

// specChanged says whether the process runs another spec than want; an
// environment that cannot be read right now is no evidence of a change.
func specChanged(sup *supervisor.Supervisor, pid int, want string) bool {
	got, known := sup.SpecOf(pid)
	return known && got != want
}

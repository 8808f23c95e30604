package hostsource

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/supervisor"
	"github.com/locus-project/locus/pkg/workload"
)

// Cgroups reads the cgroup hierarchy (*cgroup.Hierarchy).
type Cgroups interface {
	Root() string
	Procs(rel string) ([]int, error)
	// Children lists a cgroup's child cgroups (on v1, in ctrl's hierarchy).
	Children(ctrl cgroup.Controller, rel string) ([]string, error)
}

// Writer creates workloads' cgroups and moves the processes they adopt
// into them: the agent's executor (*execute.Executor), the only holder of a
// cgroup writer.
type Writer interface {
	EnsureCgroup(rel string) ([]string, error)
	AddProcs(rel string, pids []int) (cgroup.ProcsReport, error)
}

// Supervisor runs the commands of command workloads (*supervisor.Supervisor).
type Supervisor interface {
	Find(name string) []supervisor.Owned
	Ours(pid int) bool
	SpecOf(pid int) (spec string, known bool)
	Start(name, rel string, argv []string) (state.Process, error)
	Exited(name string, now time.Time) (time.Duration, string)
	Adopted(name string, now time.Time)
	WaitFor(name string, now time.Time) time.Duration
	Stop(p state.Process) error
}

// Events receives the Events the source emits (*eventlog.Log).
type Events interface {
	Emit(typ, reason, workload, format string, args ...any)
}

// Options is what a Preparer works with.
type Options struct {
	Procs   procfs.FS
	Cgroups Cgroups
	Writer  Writer
	// Exists says whether a cgroup exists (on v1, in the cpuset hierarchy).
	Exists func(rel string) bool
	Sup    Supervisor
	// Save records a workload's entry in the checkpoint.
	Save   func(name string, e state.Workload)
	Events Events
	// Wake asks for a reconcile after a delay.
	Wake func(time.Duration)
	// Pause runs between starting a command and recording it (a test's
	// window to crash in); nil: none.
	Pause func()
	Now   func() time.Time // default time.Now
	// DryRun prints what would be done to Out and changes nothing; Once
	// starts no command.
	DryRun, Once bool
	Out          io.Writer
}

// Preparer makes the HostConfig workloads' processes live in their cgroups.
type Preparer struct{ o Options }

// NewPreparer returns a Preparer working with o.
func NewPreparer(o Options) *Preparer {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Pause == nil {
		o.Pause = func() {}
	}
	return &Preparer{o: o}
}

// Prepare makes a workload's processes exist in its cgroup cg: it checks a
// `cgroup:` workload's cgroup, creates the cgroup of `command:` and `match:`
// workloads, starts or re-adopts the command, moves matching processes. It
// returns problems (the workload keeps its decision but is not written) and
// whether the cgroup is there to be written. entry is the workload's
// checkpoint entry: it is updated, and saved when it changes.
func (p *Preparer) Prepare(spec hostconfig.Workload, cg string, entry *state.Workload) (ready bool, probs []workload.Problem) {
	problem := func(reason, format string, args ...any) {
		probs = append(probs, workload.Problem{Workload: spec.Name, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	kind := KindOf(spec)
	if kind == Libvirt {
		ready, pr := p.prepareLibvirt(spec, cg)
		if pr != nil {
			probs = append(probs, *pr)
		}
		return ready, probs
	}
	if kind == Cgroup {
		if !p.o.Exists(cg) {
			problem("CgroupNotFound", "cgroup %s does not exist under %s; nothing written", cg, p.o.Cgroups.Root())
			return false, probs
		}
		return true, probs
	}
	if kind == Command && p.o.Once && !p.Alive(entry.Started) && len(p.o.Sup.Find(spec.Name)) == 0 {
		problem("NotStarted", "not started under --once")
		return false, probs
	}
	if p.o.DryRun {
		exists := p.o.Exists(cg)
		if !exists {
			fmt.Fprintf(p.o.Out, "create cgroup %s\n", cg)
		}
		if kind == Command && !p.Alive(entry.Started) && len(p.o.Sup.Find(spec.Name)) == 0 {
			fmt.Fprintf(p.o.Out, "start %s: %s\n", spec.Name, strings.Join(spec.Command, " "))
		}
		if kind == Match && exists {
			if err := p.matchProcesses(spec, cg); err != nil {
				problem("MatchFailed", "%v", err)
			}
		}
		return exists, probs
	}
	created, err := p.o.Writer.EnsureCgroup(cg)
	if len(created) > 0 {
		entry.Created = true
		p.o.Save(spec.Name, *entry)
	}
	if err != nil {
		problem("CgroupCreateFailed", "%v", err)
		return false, probs
	}
	switch kind {
	case Command:
		if pr := p.ensureCommand(spec, cg, entry); pr != nil {
			probs = append(probs, *pr)
		}
	case Match:
		if err := p.matchProcesses(spec, cg); err != nil {
			problem("MatchFailed", "%v", err)
		}
	}
	return true, probs
}

// Alive says whether the recorded process still runs (the same pid, the
// same start time); false for nil.
func (p *Preparer) Alive(pr *state.Process) bool {
	return pr != nil && p.o.Procs.Alive(pr.PID, pr.StartTime)
}

// ensureCommand keeps exactly one process running the workload's command:
// the recorded one if it still runs the same command, else one found by its
// environment (an agent killed before it recorded the start), else a new one,
// after a backoff if the previous one exited.
func (p *Preparer) ensureCommand(w hostconfig.Workload, cg string, entry *state.Workload) *workload.Problem {
	sup, events := p.o.Sup, p.o.Events
	name, now := w.Name, p.o.Now()
	spec := supervisor.SpecHash(cg, w.Command)
	if pr := entry.Started; pr != nil {
		switch {
		case !p.Alive(pr):
			delay, why := sup.Exited(name, now)
			events.Emit(eventlog.Warning, "WorkloadExited", name, "process %d exited (%s); restarting in %s", pr.PID, why, delay)
		case specChanged(sup, pr.PID, spec):
			events.Emit(eventlog.Normal, "CommandChanged", name, "command or cgroup changed: stopping process %d", pr.PID)
			if err := sup.Stop(*pr); err != nil {
				return &workload.Problem{Workload: name, Reason: "StopFailed", Message: err.Error()}
			}
		default:
			sup.Adopted(name, now)
			return nil
		}
		entry.Started = nil
		p.o.Save(name, *entry)
	}
	for i, o := range sup.Find(name) {
		if i == 0 && o.Spec == spec {
			pr := o.Process
			entry.Started = &pr
			p.o.Save(name, *entry)
			sup.Adopted(name, now)
			events.Emit(eventlog.Normal, "WorkloadAdopted", name, "process %d is already running the command", pr.PID)
			continue
		}
		events.Emit(eventlog.Warning, "DuplicateStopped", name, "stopping process %d: another process runs this workload or its command changed", o.PID)
		if err := sup.Stop(o.Process); err != nil {
			return &workload.Problem{Workload: name, Reason: "StopFailed", Message: err.Error()}
		}
	}
	if entry.Started != nil {
		return nil
	}
	if wait := sup.WaitFor(name, now); wait > 0 {
		p.o.Wake(wait)
		// A stable message: the problem is reported once, not at every tick.
		return &workload.Problem{Workload: name, Reason: "BackOff", Message: "the process exited; restarting after a backoff"}
	}
	pr, err := sup.Start(name, cg, w.Command)
	if err != nil {
		return &workload.Problem{Workload: name, Reason: "StartFailed", Message: err.Error()}
	}
	p.o.Pause() // the window a crash test aims at: started, not yet recorded
	entry.Started = &pr
	p.o.Save(name, *entry)
	events.Emit(eventlog.Normal, "WorkloadStarted", name, "started process %d: %s", pr.PID, strings.Join(w.Command, " "))
	return nil
}

// specChanged says whether the process runs another spec than want; an
// environment that cannot be read right now is no evidence of a change.
func specChanged(sup Supervisor, pid int, want string) bool {
	got, known := sup.SpecOf(pid)
	return known && got != want
}

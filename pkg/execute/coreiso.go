package execute

import (
	"errors"
	"maps"
	"slices"

	"github.com/locus-project/locus/pkg/coresched"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
)

// CoreScheduler sets core scheduling cookies (coresched); tests give a fake.
type CoreScheduler interface {
	Probe() coresched.Support
	Isolate(pids []int) error
	Clear(pids []int) error
}

type kernelCoreSched struct{}

func (kernelCoreSched) Probe() coresched.Support { return coresched.Probe() }
func (kernelCoreSched) Isolate(pids []int) error { return coresched.Isolate(pids) }
func (kernelCoreSched) Clear(pids []int) error   { return coresched.Clear(pids) }

// applyCoreIsolation carries out the decision's core isolation: every
// process of an isolated workload shares one cookie of the workload's own
// (processes that joined since get it too), and a workload no longer
// isolated loses its cookie. It is the only step that touches processes for
// CPU QoS. Without core scheduling it says so once and does nothing.
func (e *Executor) applyCoreIsolation(ws []decide.WorkloadState, cgroupsOf map[string][]string) {
	if e.c.DryRun {
		return
	}
	want := map[string]bool{}
	for _, w := range ws {
		if w.CoreIsolation {
			want[w.Name] = true
		}
	}
	if !e.coreSupport.Available {
		// No cookie can have been given on this kernel: nothing to take
		// back either.
		if len(want) > 0 && !e.coreToldUnavailable {
			e.coreToldUnavailable = true
			e.c.Events.Emit(eventlog.Warning, "CoreIsolationUnavailable", "", "core isolation is asked for but core scheduling is %s; the workloads run without it", e.coreSupport.Reason)
		}
		return
	}
	e.loadIsolated()
	before := maps.Clone(e.isolated)
	defer e.saveIsolated(before)
	for _, w := range ws {
		switch {
		case want[w.Name]:
			pids := e.pidsOf(cgroupsOf[w.Name])
			if len(pids) == 0 {
				continue
			}
			err := e.c.Core.Isolate(pids)
			if err != nil && !errors.Is(err, coresched.ErrUnavailable) {
				e.c.Events.Emit(eventlog.Warning, "CoreIsolationFailed", w.Name, "%v", err)
				continue
			}
			e.isolated[w.Name] = true
		case e.isolated[w.Name]:
			if err := e.c.Core.Clear(e.pidsOf(cgroupsOf[w.Name])); err != nil {
				e.c.Events.Emit(eventlog.Warning, "CoreIsolationFailed", w.Name, "clearing its cookie: %v", err)
				continue
			}
			delete(e.isolated, w.Name)
		}
	}
	// A workload gone from the decision had its cookie taken back as it
	// was removed (unisolateRemoved).
	present := map[string]bool{}
	for _, w := range ws {
		present[w.Name] = true
	}
	maps.DeleteFunc(e.isolated, func(name string, _ bool) bool { return !present[name] })
}

// unisolateRemoved takes the cookie back from the processes of the
// isolated workloads among ws, which are leaving management: a workload
// whose cgroup the agent did not make (an existing cgroup, matched
// processes) keeps running after it goes, and must not keep a cookie
// nothing will ever take away. A pod's cgroups are gone or going, and
// their processes with them: nothing is found there, at no cost.
func (e *Executor) unisolateRemoved(ws map[string]state.Workload) {
	if e.c.DryRun || !e.coreSupport.Available {
		return
	}
	e.loadIsolated()
	before := maps.Clone(e.isolated)
	defer e.saveIsolated(before)
	for _, name := range slices.Sorted(maps.Keys(ws)) {
		if !e.isolated[name] {
			continue
		}
		// Once it is gone nothing names its processes again: a failure is
		// said, not retried.
		if err := e.c.Core.Clear(e.pidsOf([]string{ws[name].Cgroup})); err != nil {
			e.c.Events.Emit(eventlog.Warning, "CoreIsolationFailed", name, "clearing its cookie as it leaves management: %v; its processes keep it", err)
		}
		delete(e.isolated, name)
	}
}

// loadIsolated reads, once, the workloads an earlier run of the agent
// isolated: one that stopped asking while the agent was down still has
// its cookie, and must lose it.
func (e *Executor) loadIsolated() {
	if e.isolatedLoaded {
		return
	}
	ck, err := e.c.Store.Load()
	if err != nil {
		return // a later Apply tries again; the reconcile reports the error
	}
	e.isolatedLoaded = true
	for _, name := range ck.CoreIsolated {
		e.isolated[name] = true
	}
}

// saveIsolated records the isolated workloads when they changed.
func (e *Executor) saveIsolated(before map[string]bool) {
	if maps.Equal(before, e.isolated) {
		return
	}
	names := slices.Sorted(maps.Keys(e.isolated))
	err := e.c.Store.Update(func(c *state.Checkpoint) error {
		c.CoreIsolated = names
		return nil
	})
	if err != nil {
		e.c.Events.Emit(eventlog.Warning, "CheckpointFailed", "", "recording the core-isolated workloads: %v", err)
	}
}

// pidsOf lists the processes of cgroups, sorted and once each.
func (e *Executor) pidsOf(cgs []string) []int {
	var out []int
	for _, cg := range cgs {
		if pids, err := e.c.Hierarchy.Procs(cg); err == nil {
			out = append(out, pids...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

package execute

import (
	"errors"
	"fmt"
	"path"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
)

// Remove undoes what the agent did for a workload it no longer
// manages: it stops the process it started, writes back the original value
// of every file it changed, and removes the cgroups it created (the
// workload's, then ancestors no other workload uses). It drops the workload
// from the checkpoint only once all of that is done, so an interrupted
// removal resumes on the next reconcile. keep lists cgroups still in use.
//
// A pod's cgroups are removed by the kubelet while this runs: a restore
// that meets a cgroup gone (cgroup.ErrCgroupGone) starts over, and the
// next attempt finds that cgroup absent, skips it and forgets its
// originals. Should cgroups keep vanishing under every attempt, the
// removal is left for the next reconcile, quietly: nothing failed.
func (e *Executor) Remove(name string, w state.Workload, keep map[string]bool) (Report, error) {
	var res Report
	for range removeAttempts {
		err := e.removeOnce(name, w, keep, &res)
		if !errors.Is(err, cgroup.ErrCgroupGone) {
			return res, err
		}
	}
	e.c.Log.Info("removal left for the next reconcile: its cgroups are being removed", "workload", name)
	return res, nil
}

// removeAttempts bounds the attempts of one removal in one reconcile.
const removeAttempts = 3

func (e *Executor) removeOnce(name string, w state.Workload, keep map[string]bool, res *Report) error {
	if w.Started != nil && e.alive(w.Started) {
		if e.c.DryRun {
			fmt.Fprintf(e.c.Out, "stop %s: process %d\n", name, w.Started.PID)
		} else {
			if err := e.c.Stopper.Stop(*w.Started); err != nil {
				return fmt.Errorf("stop %s: %w", name, err)
			}
			e.c.Events.Emit(eventlog.Normal, "WorkloadStopped", name, "stopped process %d", w.Started.PID)
		}
	}
	if !keep[w.Cgroup] {
		// Both go hierarchy by hierarchy and skip what is gone: a crash may
		// have come after some v1 hierarchies, or before the parent.
		if err := e.restoreAll(name, w.Cgroup, res); err != nil {
			return err
		}
		if e.c.Pods { // a pod: its containers are cgroups of their own
			if err := e.restoreBelow(name, w.Cgroup, res); err != nil {
				return err
			}
		}
		if err := e.removeCgroup(w.Cgroup); err != nil {
			return err
		}
		for p := path.Dir(w.Cgroup); !e.c.DryRun && p != "." && !usedUnder(p, keep); p = path.Dir(p) {
			if e.removeCgroup(p) != nil {
				break // someone else's, or still holding other cgroups
			}
		}
	}
	if e.c.DryRun {
		return nil
	}
	if err := e.c.Store.Update(func(c *state.Checkpoint) error {
		delete(c.Workloads, name)
		return nil
	}); err != nil {
		return err
	}
	if m, ok := e.c.Originals.(*cgroup.FileStore); ok {
		// Its cgroup is no longer Locus's: a new workload there starts afresh.
		if err := m.SetMark(cgroup.NoMark, w.Cgroup); err != nil {
			e.c.Log.Warn("cannot clear the originals mark", "cgroup", w.Cgroup, "err", err)
		}
	}
	e.c.Events.Emit(eventlog.Normal, "WorkloadRemoved", name, "no longer managed; cgroup %s restored", w.Cgroup)
	return nil
}

// restoreAll writes back every recorded original of the cgroup.
func (e *Executor) restoreAll(name, rel string, res *Report) error {
	var targets []cgroup.Target
	for _, k := range cgroup.Knobs() {
		if spec, _ := cgroup.Lookup(k); spec.ReadOnly {
			continue
		}
		if e.knobPresent(rel, k) && e.hasOriginal(rel, k) {
			targets = append(targets, cgroup.Target{Cgroup: rel, Knob: k})
		}
	}
	if len(targets) == 0 {
		return nil
	}
	rep, err := e.c.Writer.Restore(targets)
	e.account(rep, map[string]string{rel: name}, res)
	if err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	return nil
}

// removeCgroup removes a cgroup the agent created; others are left alone
// without error.
func (e *Executor) removeCgroup(rel string) error {
	if e.c.DryRun {
		fmt.Fprintf(e.c.Out, "remove cgroup %s (if Locus created it)\n", rel)
		return nil
	}
	err := e.c.Writer.RemoveCgroup(rel)
	if errors.Is(err, cgroup.ErrNotCreated) {
		return nil
	}
	return err
}

func usedUnder(dir string, keep map[string]bool) bool {
	for cg := range keep {
		if related(dir, cg) {
			return true
		}
	}
	return false
}

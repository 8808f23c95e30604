package agent

import (
	"errors"
	"fmt"
	"path"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
)

// removeWorkload undoes what the agent did for a workload it no longer
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
func (a *Agent) removeWorkload(name string, e state.Workload, keep map[string]bool, res *Result) error {
	for range removeAttempts {
		err := a.removeOnce(name, e, keep, res)
		if !errors.Is(err, cgroup.ErrCgroupGone) {
			return err
		}
	}
	a.log.Info("removal left for the next reconcile: its cgroups are being removed", "workload", name)
	return nil
}

// removeAttempts bounds the attempts of one removal in one reconcile.
const removeAttempts = 3

func (a *Agent) removeOnce(name string, e state.Workload, keep map[string]bool, res *Result) error {
	if e.Started != nil && a.procAlive(e.Started) {
		if a.opts.DryRun {
			fmt.Fprintf(a.opts.Out, "stop %s: process %d\n", name, e.Started.PID)
		} else {
			if err := a.sup.Stop(*e.Started); err != nil {
				return fmt.Errorf("stop %s: %w", name, err)
			}
			a.events.Emit(eventlog.Normal, "WorkloadStopped", name, "stopped process %d", e.Started.PID)
		}
	}
	if !keep[e.Cgroup] {
		// Both go hierarchy by hierarchy and skip what is gone: a crash may
		// have come after some v1 hierarchies, or before the parent.
		if err := a.restoreAll(name, e.Cgroup, res); err != nil {
			return err
		}
		if a.src != nil { // a pod: its containers are cgroups of their own
			if err := a.restoreBelow(name, e.Cgroup, res); err != nil {
				return err
			}
		}
		if err := a.removeCgroup(e.Cgroup); err != nil {
			return err
		}
		for p := path.Dir(e.Cgroup); !a.opts.DryRun && p != "." && !usedUnder(p, keep); p = path.Dir(p) {
			if a.removeCgroup(p) != nil {
				break // someone else's, or still holding other cgroups
			}
		}
	}
	if a.opts.DryRun {
		return nil
	}
	if err := a.store.Update(func(c *state.Checkpoint) error {
		delete(c.Workloads, name)
		return nil
	}); err != nil {
		return err
	}
	if m, ok := a.originals.(*cgroup.FileStore); ok {
		// Its cgroup is no longer Locus's: a new workload there starts afresh.
		if err := m.SetMark(cgroup.NoMark, e.Cgroup); err != nil {
			a.log.Warn("cannot clear the originals mark", "cgroup", e.Cgroup, "err", err)
		}
	}
	a.events.Emit(eventlog.Normal, "WorkloadRemoved", name, "no longer managed; cgroup %s restored", e.Cgroup)
	return nil
}

// restoreAll writes back every recorded original of the cgroup.
func (a *Agent) restoreAll(name, rel string, res *Result) error {
	var targets []cgroup.Target
	for _, k := range cgroup.Knobs() {
		if spec, _ := cgroup.Lookup(k); spec.ReadOnly {
			continue
		}
		if a.knobPresent(rel, k) && a.hasOriginal(rel, k) {
			targets = append(targets, cgroup.Target{Cgroup: rel, Knob: k})
		}
	}
	if len(targets) == 0 {
		return nil
	}
	rep, err := a.w.Restore(targets)
	a.account(rep, map[string]string{rel: name}, res)
	if err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	return nil
}

// removeCgroup removes a cgroup the agent created; others are left alone
// without error.
func (a *Agent) removeCgroup(rel string) error {
	if a.opts.DryRun {
		fmt.Fprintf(a.opts.Out, "remove cgroup %s (if Locus created it)\n", rel)
		return nil
	}
	err := a.w.RemoveCgroup(rel)
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

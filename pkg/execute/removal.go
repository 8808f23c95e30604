package execute

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"time"

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
	rep, errs := e.RemoveAll(map[string]state.Workload{name: w}, keep)
	return rep, errs[name]
}

// RemoveAll removes the workloads of ws, by name, each as Remove does, in
// one pass: the originals are listed once, and the originals of cgroups
// found gone forgotten, the workloads dropped from the checkpoint and
// their marks cleared in one update of each for all of them, so thirty
// pods deleted at once cost one rewrite of each file, not thirty. The
// workloads whose removal failed keep their entries; errs holds their
// errors.
func (e *Executor) RemoveAll(ws map[string]state.Workload, keep map[string]bool) (res Report, errs map[string]error) {
	errs = map[string]error{}
	e.unisolateRemoved(ws)
	below := e.originalsBelow(ws, keep)
	var done, gone []string
	for _, name := range slices.Sorted(maps.Keys(ws)) {
		w := ws[name]
		finished := false
		for range removeAttempts {
			g, err := e.removeOnce(name, w, keep, below[w.Cgroup], &res)
			gone = append(gone, g...)
			if !errors.Is(err, cgroup.ErrCgroupGone) {
				if finished = err == nil; err != nil {
					errs[name] = err
				}
				break
			}
		}
		if finished {
			done = append(done, name)
		} else if errs[name] == nil {
			e.c.Log.Info("removal left for the next reconcile: its cgroups are being removed", "workload", name)
		}
	}
	if e.c.DryRun {
		return res, errs
	}
	// The originals of cgroups gone go first: a crash before the
	// checkpoint update only has the next reconcile remove them again.
	if err := e.forget(gone); err != nil {
		return res, failAll(errs, done, err)
	}
	if len(done) == 0 {
		return res, errs
	}
	if err := e.c.Store.Update(func(c *state.Checkpoint) error {
		for _, name := range done {
			delete(c.Workloads, name)
		}
		return nil
	}); err != nil {
		return res, failAll(errs, done, err)
	}
	if m, ok := e.c.Originals.(*cgroup.FileStore); ok {
		// Their cgroups are no longer Locus's: a new workload there starts afresh.
		cgs := make([]string, len(done))
		for i, name := range done {
			cgs[i] = ws[name].Cgroup
		}
		if err := m.SetMark(cgroup.NoMark, cgs...); err != nil {
			e.c.Log.Warn("cannot clear the originals marks", "cgroups", cgs, "err", err)
		}
	}
	for _, name := range done {
		e.c.Events.Emit(eventlog.Normal, "WorkloadRemoved", name, "no longer managed; cgroup %s restored", ws[name].Cgroup)
	}
	return res, errs
}

// failAll gives each of names err.
func failAll(errs map[string]error, names []string, err error) map[string]error {
	for _, name := range names {
		errs[name] = err
	}
	return errs
}

// removeAttempts bounds the attempts of one removal in one reconcile.
const removeAttempts = 3

// removeOnce stops a workload's process, restores its files and removes
// its cgroups. It returns the originals keys of its cgroups found gone, to
// be forgotten; below are the originals recorded under its cgroup.
func (e *Executor) removeOnce(name string, w state.Workload, keep map[string]bool, below []originalKey, res *Report) ([]string, error) {
	stopped := false
	if w.Started != nil && e.alive(w.Started) {
		if e.c.DryRun {
			fmt.Fprintf(e.c.Out, "stop %s: process %d\n", name, w.Started.PID)
		} else {
			if err := e.c.Stopper.Stop(*w.Started); err != nil {
				return nil, fmt.Errorf("stop %s: %w", name, err)
			}
			e.c.Events.Emit(eventlog.Normal, "WorkloadStopped", name, "stopped process %d", w.Started.PID)
			stopped = true
		}
	}
	if keep[w.Cgroup] {
		return nil, nil
	}
	// Both go hierarchy by hierarchy and skip what is gone: a crash may
	// have come after some v1 hierarchies, or before the parent.
	if err := e.restoreAll(name, w.Cgroup, res); err != nil {
		return nil, err
	}
	gone, err := e.restoreBelow(name, w.Cgroup, below, res)
	if err != nil {
		return gone, err
	}
	within := time.Duration(0)
	if stopped {
		within = stoppedRelease
	}
	if err := e.removeCgroup(w.Cgroup, within); err != nil {
		return gone, err
	}
	for p := path.Dir(w.Cgroup); !e.c.DryRun && p != "." && !usedUnder(p, keep); p = path.Dir(p) {
		if e.removeCgroup(p, 0) != nil {
			break // someone else's, or still holding other cgroups
		}
	}
	return gone, nil
}

// restoreAll writes back every recorded original of the cgroup. The store
// is asked first, a lookup; the directory is looked at only for a knob with
// an original, once per controller: it was one walk of the path per knob,
// most of a pod's removal under a churn.
func (e *Executor) restoreAll(name, rel string, res *Report) error {
	var targets []cgroup.Target
	exists := dirLooks{h: e.c.Hierarchy}
	for _, k := range cgroup.Knobs() {
		if spec, _ := cgroup.Lookup(k); spec.ReadOnly || !e.hasOriginal(rel, k) {
			continue
		}
		if pl, _ := e.placement(k); exists.of(pl.Controller, rel) { // hasOriginal: pl is there
			targets = append(targets, cgroup.Target{Cgroup: rel, Knob: k})
		}
	}
	if len(targets) == 0 {
		return nil
	}
	rep, err := e.w.Restore(targets)
	e.account(rep, map[string]string{rel: name}, nil, nil, nil, res)
	if err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	return nil
}

// dirLooks answers Exists once per cgroup and controller, for the files of
// one removal: they are looked at in the same instant.
type dirLooks struct {
	h     *cgroup.Hierarchy
	found map[ctrlDir]bool
}

type ctrlDir struct {
	ctrl cgroup.Controller
	rel  string
}

func (d *dirLooks) of(ctrl cgroup.Controller, rel string) bool {
	key := ctrlDir{ctrl, rel}
	v, ok := d.found[key]
	if !ok {
		if d.found == nil {
			d.found = map[ctrlDir]bool{}
		}
		v = d.h.Exists(ctrl, rel)
		d.found[key] = v
	}
	return v
}

// stoppedRelease bounds how long the removal of a cgroup whose process was
// just stopped waits for the kernel to let go of it (RemoveCgroupWithin).
const stoppedRelease = 2 * time.Second

// removeCgroup removes a cgroup the agent created; others are left alone
// without error. within > 0 retries EBUSY for that long.
func (e *Executor) removeCgroup(rel string, within time.Duration) error {
	if e.c.DryRun {
		fmt.Fprintf(e.c.Out, "remove cgroup %s (if Locus created it)\n", rel)
		return nil
	}
	err := e.w.RemoveCgroupWithin(rel, within, 20*time.Millisecond)
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

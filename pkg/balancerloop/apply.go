package balancerloop

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/workload"
)

// A group's memory follows it in two steps, so that no cgroup write stalls
// it (or the reconcile) for longer than the memory locality budget: first
// its CPUs move and cpuset.mems widens to include the new nodes, then the
// memory locality worker moves its memory in bounded batches, and only once
// at most narrowRemote of it is left elsewhere is cpuset.mems narrowed to
// the new nodes: always on cgroup v1, where that moves nothing, and on v2
// only with NarrowMems. On v2 narrowing makes the kernel migrate every page
// the group's processes map on the nodes left (their binaries' too) inside
// the write, without a bound, while the writer (and so the reconcile)
// waits: in the test guest such writes took minutes. A group with memory
// left elsewhere after maxRuns runs keeps the wide mems (its new memory is
// still allocated locally, first touch).
const (
	narrowRemote = 1 << 20
	maxRuns      = 3
	// wide marks, in the record, a group that gave up narrowing.
	wide = "!wide"
)

// settle looks at the memory locality runs of the groups placed but not
// settled: memory home narrows mems, too much left runs again (the worker
// forgets a run whose group drops out of its targets for one reconcile, so
// leaving it out once makes the next one due).
func (r *Runner) settle(lastRun func(name string) (Run, bool)) {
	if r.rec.Settled == nil {
		r.rec.Settled = map[string]string{}
	}
	for name, key := range r.rec.Settled {
		if p, ok := r.placed[name]; !ok || strings.TrimSuffix(key, wide) != joinParts(p.Partitions) {
			delete(r.rec.Settled, name)
			delete(r.runs, name)
		}
	}
	if lastRun == nil {
		return
	}
	for _, g := range r.groups {
		p, ok := r.placed[g.name]
		if !ok || len(p.Partitions) == 0 || r.rec.Settled[g.name] != "" || r.retry[g.name] {
			continue
		}
		key := joinParts(p.Partitions)
		m, known := r.remoteNow(g, p.Nodes)
		if r.runs[g.name] == 0 && known && m.remote <= narrowRemote {
			r.rec.Settled[g.name] = r.home(key) // home already: no run needed
			continue
		}
		run, ok := lastRun(g.name)
		since := r.rec.State.Groups[g.name].Since
		if !ok || run.CPUs != r.written[g.name] || run.Ran.Before(since) {
			continue
		}
		switch {
		case run.Reason == locality.EventSkipped || (known && m.remote <= narrowRemote):
			r.rec.Settled[g.name] = r.home(key)
		case r.runs[g.name]+1 >= maxRuns:
			r.rec.Settled[g.name] = key + wide
			r.d.Events.Emit(eventlog.Warning, "NUMABalancerMemoryRemote", g.name, "after %d memory locality runs %s of its memory is still off %s; cpuset.mems stays %s",
				maxRuns, m, key, r.wideMems[g.name])
		default:
			r.runs[g.name]++
			r.retry[g.name] = true
		}
	}
}

// home is the settled mark of a group whose memory is home: its mems
// narrow, unless that would make a cgroup v2 kernel migrate inside the
// write (see NarrowMems).
func (r *Runner) home(key string) string {
	if r.d.H.Version() == cgroup.V1 || r.opts.NarrowMems {
		return key
	}
	return key + wide
}

// placements are where the groups go, for the decision: the workloads
// placed, by name, and the cgroups that are no workload's (one placed is
// recorded first, so that turning the balancer off restores it; one
// recorded and not placed now gets the pool). A recorded cgroup no longer
// found is released: restored by the decision if it still exists, its
// originals forgotten if it is gone (the VM stopped).
func (r *Runner) placements() decide.Balanced {
	b := decide.Balanced{Workloads: map[string]decide.Placement{}, Cgroups: map[string]decide.Placement{}}
	extra := map[string]bool{}
	for _, cg := range r.extra {
		extra[cg] = true
		p, ok := r.placed[cg]
		switch {
		case ok && len(p.Partitions) > 0:
			r.record(cg)
			b.Cgroups[cg] = r.placement(cg, p)
		case slices.Contains(r.rec.Extra, cg):
			b.Cgroups[cg] = decide.Placement{}
		}
	}
	for _, w := range r.ws {
		if p, ok := r.placed[w.Name]; ok && len(p.Partitions) > 0 {
			b.Workloads[w.Name] = r.placement(w.Name, p)
		}
	}
	var keep []string
	for _, cg := range r.rec.Extra {
		switch {
		case extra[cg]:
			keep = append(keep, cg)
		case r.d.H.Exists(cgroup.CPUSet, cg):
			b.Released = append(b.Released, cg)
		default:
			r.forget(cg)
		}
	}
	r.rec.Extra, r.released = keep, b.Released
	return b
}

// placement is a group's placement as the decision takes it: its memory
// is home once settled on the same partitions.
func (r *Runner) placement(name string, p balancer.Placement) decide.Placement {
	return decide.Placement{CPUs: p.CPUs, Nodes: slices.Clone(p.Nodes), Home: r.rec.Settled[name] == joinParts(p.Partitions)}
}

// record adds a cgroup that is no workload's to those written, saving the
// record before the decision writes it.
func (r *Runner) record(cg string) {
	if !slices.Contains(r.rec.Extra, cg) {
		r.rec.Extra = append(r.rec.Extra, cg)
		slices.Sort(r.rec.Extra)
		r.save()
	}
}

// forget drops the originals of a written cgroup that no longer exists.
func (r *Runner) forget(cg string) {
	var keys []string
	for _, k := range []cgroup.Knob{cgroup.CPUSetCPUs, cgroup.CPUSetMems} {
		spec, _ := cgroup.Lookup(k)
		if pl := spec.Placement(r.d.H.Version()); pl != nil {
			keys = append(keys, filepath.ToSlash(filepath.Join(string(pl.Controller), cg, pl.File)))
		}
	}
	_ = r.d.Originals.Forget(keys...)
}

// tellReleased tells the cgroups released by the last decision whose
// cpusets it restored (failed names those it could not write, or found
// gone).
func (r *Runner) tellReleased(failed func(string) bool) {
	for _, cg := range r.released {
		if !failed(cg) {
			r.d.Events.Emit(eventlog.Normal, "NUMABalancerReleased", cg, "no longer balanced: cpuset.cpus and cpuset.mems restored")
		}
	}
	r.released = nil
}

// releaseAll runs once when the agent starts with the balancer off: the
// cgroups an earlier run wrote outside the workloads are released, their
// cpusets restored by the decision (workloads get the plan's at once
// anyway); the record goes once that is done (AfterWrite).
func (r *Runner) releaseAll() decide.Balanced {
	if _, err := os.Stat(filepath.Join(r.d.StateDir, File)); err != nil {
		r.disabling = false // no earlier run left anything
		return decide.Balanced{}
	}
	r.rec = r.load()
	var b decide.Balanced
	for _, cg := range r.rec.Extra {
		if r.d.H.Exists(cgroup.CPUSet, cg) {
			b.Released = append(b.Released, cg)
		} else {
			r.forget(cg)
		}
	}
	r.released = b.Released
	return b
}

// disabled removes the record once the decision released what it named.
func (r *Runner) disabled(failed func(string) bool) {
	r.disabling = false
	r.tellReleased(failed)
	if err := os.Remove(filepath.Join(r.d.StateDir, File)); err != nil {
		r.d.Log.Warn("numa balancer: cannot remove its record", "err", err)
		return
	}
	r.d.Events.Emit(eventlog.Normal, "NUMABalancerDisabled", "", "the NUMA balancer is off: %d group(s) keep the pools' cpusets again, %d other cgroup(s) restored",
		len(r.rec.State.Groups)-len(r.rec.Extra), len(r.rec.Extra))
}

// Unsettled is a group placed whose memory is not home yet: the memory
// locality run the balancer needs for it.
type Unsettled struct {
	Name       string
	Containers []workload.Container
	CPUs       string // the cpuset.cpus written
	Nodes      []int  // its partitions' NUMA nodes
}

// AfterWrite runs once per reconcile, after the cgroup writes of the
// decision d (failed names the workloads and cgroups whose writes failed
// or found them gone): it tells the cgroups released, takes the groups of
// the next measuring window from d (the workloads it left in the shared
// and BE pools, and the cgroups that are no workload's) with what each
// was given, starts that window, and returns the groups placed but not yet
// settled whose memory locality run is due. A group whose processes all
// live in child cgroups (a libvirt VM's scope) has nothing the worker can
// list; it is settled at once and its memory follows cpuset.mems (cgroup
// v2). An off runner only finishes releasing, once.
func (r *Runner) AfterWrite(d decide.Desired, failed func(string) bool) []Unsettled {
	if r.off {
		if r.disabling {
			r.disabled(failed)
		}
		return nil
	}
	r.tellReleased(failed)
	r.shared, r.wgroups = d.Pools.Shared, r.workloadGroups(d)
	r.groups = append(slices.Clip(r.wgroups), r.extraGroups()...)
	for _, g := range r.groups {
		p, placed := r.placed[g.name]
		set, ok := d.Balanced[g.cgroup]
		if !placed || !ok || set.Pool != "" {
			continue
		}
		r.written[g.name] = set.CPUs
		if r.rec.Settled[g.name] != joinParts(p.Partitions) {
			r.wideMems[g.name] = set.Mems
		}
	}
	r.afterWrite()
	var out []Unsettled
	for _, g := range r.groups {
		p, ok := r.placed[g.name]
		if !ok || len(p.Partitions) == 0 || r.written[g.name] == "" || r.rec.Settled[g.name] != "" {
			continue
		}
		if r.retry[g.name] {
			delete(r.retry, g.name) // left out once: the worker forgets its last run
			continue
		}
		if g.state < 0 {
			if pids, _ := r.d.H.Procs(g.cgroup); len(pids) == 0 {
				r.rec.Settled[g.name] = joinParts(p.Partitions)
				continue
			}
		}
		out = append(out, Unsettled{Name: g.name, Containers: g.containers, CPUs: r.written[g.name], Nodes: p.Nodes})
	}
	return out
}

func joinParts(p []string) string { return strings.Join(p, ",") }

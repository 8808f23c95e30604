package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/localityloop"
	"github.com/locus-project/locus/pkg/topology"
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
func (r *balancerRunner) settle() {
	if r.rec.Settled == nil {
		r.rec.Settled = map[string]string{}
	}
	for name, key := range r.rec.Settled {
		if p, ok := r.placed[name]; !ok || strings.TrimSuffix(key, wide) != joinParts(p.Partitions) {
			delete(r.rec.Settled, name)
			delete(r.runs, name)
		}
	}
	loc := r.a.loc
	if loc == nil {
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
		rec := loc.Record(g.name)
		since := r.rec.State.Groups[g.name].Since
		if rec == nil || rec.CPUs != r.written[g.name] || rec.Ran.Before(since) {
			continue
		}
		switch {
		case rec.Last.Reason == locality.EventSkipped || (known && m.remote <= narrowRemote):
			r.rec.Settled[g.name] = r.home(key)
		case r.runs[g.name]+1 >= maxRuns:
			r.rec.Settled[g.name] = key + wide
			r.a.events.Emit(eventlog.Warning, "NUMABalancerMemoryRemote", g.name, "after %d memory locality runs %s of its memory is still off %s; cpuset.mems stays %s",
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
func (r *balancerRunner) home(key string) string {
	if r.a.h.Version() == cgroup.V1 || r.opts.NarrowMems {
		return key
	}
	return key + wide
}

// apply gives the balanced workloads their cpusets in the decision (a copy:
// the plan's decision is reused while its input holds) and writes those of
// the other balanced cgroups.
func (r *balancerRunner) apply(d decide.Desired) decide.Desired {
	d.Ops, d.Workloads = slices.Clone(d.Ops), slices.Clone(d.Workloads)
	shared := decide.Mems(r.a.topo, d.Pools.Shared, false)
	want := map[string][2]string{} // container cgroup -> cpus, mems
	extra := map[string]bool{}
	for _, g := range r.groups {
		p, ok := r.placed[g.name]
		// The pool may have shrunk since the decision (a workload took CPUs
		// of its own): never hand out CPUs that left it. Until the next
		// decision such a group runs in the pool, as the plan has it (a
		// cgroup outside the workloads that was written before, too).
		set := p.CPUs.Intersection(g.allowed)
		if !ok || len(p.Partitions) == 0 || set.IsEmpty() {
			if g.state < 0 && !g.allowed.IsEmpty() && slices.Contains(r.rec.Extra, g.cgroup) {
				extra[g.cgroup] = true
				r.writeExtra(g, g.allowed.String(), shared)
			}
			continue
		}
		cpus, mems := set.String(), nodeSet(p.Nodes)
		base := shared
		if g.state >= 0 {
			base = d.Workloads[g.state].Mems // the plan's, before it is rewritten below
		}
		if r.rec.Settled[g.name] != joinParts(p.Partitions) {
			mems = widen(base, p.Nodes)
			r.wideMems[g.name] = mems
		}
		r.written[g.name] = cpus
		if g.state < 0 {
			extra[g.cgroup] = true
			r.writeExtra(g, cpus, mems)
			continue
		}
		for _, c := range g.containers {
			want[c.Cgroup] = [2]string{cpus, mems}
		}
		st := &d.Workloads[g.state]
		st.CPUs, st.Mems, st.NUMANodes = cpus, mems, slices.Clone(p.Nodes)
	}
	for i, op := range d.Ops {
		if v, ok := want[op.Cgroup]; ok {
			switch op.Knob {
			case cgroup.CPUSetCPUs:
				d.Ops[i].Value = v[0]
			case cgroup.CPUSetMems:
				d.Ops[i].Value = v[1]
			}
		}
	}
	r.forgetExtra(extra)
	return d
}

// writeExtra writes a cgroup that is no workload's, recording it first so
// that turning the balancer off restores it.
func (r *balancerRunner) writeExtra(g balancerGroup, cpus, mems string) {
	if !slices.Contains(r.rec.Extra, g.cgroup) {
		r.rec.Extra = append(r.rec.Extra, g.cgroup)
		slices.Sort(r.rec.Extra)
		r.save()
	}
	rep, err := r.a.w.Apply([]cgroup.Op{{Cgroup: g.cgroup, Knob: cgroup.CPUSetMems, Value: mems},
		{Cgroup: g.cgroup, Knob: cgroup.CPUSetCPUs, Value: cpus}})
	var changed []string
	for _, res := range rep.Results {
		if res.Outcome == cgroup.Written {
			changed = append(changed, string(res.Knob)+"="+res.After)
		}
	}
	if len(changed) > 0 {
		r.a.metrics.writes.Add(float64(len(rep.Writes)))
		r.a.events.Emit(eventlog.Normal, "CgroupUpdated", g.name, "%s", strings.Join(changed, " "))
	}
	if err != nil && !errors.Is(err, cgroup.ErrCgroupGone) { // a group that went away is no failure
		r.a.events.Emit(eventlog.Warning, "CgroupWriteFailed", g.name, "%v", err)
	}
}

// forgetExtra drops the recorded cgroups that are no longer balanced:
// restored if they still exist (their parent left the options), their
// originals forgotten if they are gone (the VM stopped).
func (r *balancerRunner) forgetExtra(live map[string]bool) {
	var keep []string
	for _, cg := range r.rec.Extra {
		if live[cg] {
			keep = append(keep, cg)
			continue
		}
		r.restore(cg)
	}
	r.rec.Extra = keep
}

// restore puts back a written cgroup's cpuset, or forgets its originals
// when it no longer exists.
func (r *balancerRunner) restore(cg string) {
	if !r.a.cgroupExists(cg) {
		var keys []string
		for _, k := range []cgroup.Knob{cgroup.CPUSetCPUs, cgroup.CPUSetMems} {
			spec, _ := cgroup.Lookup(k)
			if pl := spec.Placement(r.a.h.Version()); pl != nil {
				keys = append(keys, filepath.ToSlash(filepath.Join(string(pl.Controller), cg, pl.File)))
			}
		}
		_ = r.a.originals.Forget(keys...)
		return
	}
	_, err := r.a.w.Restore([]cgroup.Target{{Cgroup: cg, Knob: cgroup.CPUSetCPUs}, {Cgroup: cg, Knob: cgroup.CPUSetMems}})
	if errors.Is(err, cgroup.ErrCgroupGone) {
		return
	}
	if err != nil {
		r.a.events.Emit(eventlog.Warning, "CgroupWriteFailed", cg, "restoring its cpuset: %v", err)
		return
	}
	r.a.events.Emit(eventlog.Normal, "NUMABalancerReleased", cg, "no longer balanced: cpuset.cpus and cpuset.mems restored")
}

// restoreAll runs once when the agent starts with the balancer off: the
// cgroups an earlier run wrote outside the workloads get their cpusets
// back (workloads get the plan's at once anyway), and the record goes.
func (r *balancerRunner) restoreAll() {
	path := filepath.Join(r.a.opts.StateDir, BalancerFile)
	if _, err := os.Stat(path); err != nil {
		return
	}
	rec := r.load()
	for _, cg := range rec.Extra {
		r.restore(cg)
	}
	if err := os.Remove(path); err != nil {
		r.a.log.Warn("numa balancer: cannot remove its record", "err", err)
		return
	}
	r.a.events.Emit(eventlog.Normal, "NUMABalancerDisabled", "", "the NUMA balancer is off: %d group(s) keep the pools' cpusets again, %d other cgroup(s) restored",
		len(rec.State.Groups)-len(rec.Extra), len(rec.Extra))
}

// balancerTargets runs once per reconcile, after the cgroup writes: it
// starts the balancer's next measuring window, and returns the memory
// locality runs the balancer needs: groups placed but not yet settled. A
// group whose processes all live in child cgroups (a libvirt VM's scope)
// has nothing the worker can list; it is settled at once and its memory
// follows cpuset.mems (cgroup v2).
func (a *Agent) balancerTargets() []localityloop.Target {
	r := a.bal
	if r == nil || r.off {
		return nil
	}
	r.afterWrite()
	nodes := localityloop.MemoryNodes(a.topo)
	var out []localityloop.Target
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
			if pids, _ := a.h.Procs(g.cgroup); len(pids) == 0 {
				r.rec.Settled[g.name] = joinParts(p.Partitions)
				continue
			}
		}
		t := localityloop.Target{Name: g.name, Containers: g.containers, CPUs: r.written[g.name], Local: p.Nodes, Nodes: nodes,
			Settings: locality.Settings{Policy: locality.PolicyBestEffort}}
		if !slices.ContainsFunc(nodes, func(n int) bool { return !slices.Contains(p.Nodes, n) }) {
			t.Skip = locality.ReasonNoTargetNUMA
		}
		out = append(out, t)
	}
	return out
}

func joinParts(p []string) string { return strings.Join(p, ",") }

func nodeSet(nodes []int) string { return cpuset.New(nodes...).String() }

// widen is a mems list with nodes added.
func widen(mems string, nodes []int) string {
	ids, err := topology.ParseNodeList(mems)
	set := cpuset.New(ids...)
	if err != nil {
		set = cpuset.New()
	}
	return set.Union(cpuset.New(nodes...)).String()
}

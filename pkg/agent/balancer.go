package agent

import (
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/balancer/probe"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/localityloop"
	"github.com/locus-project/locus/pkg/workload"
)

// The NUMA balancer in the agent: every reconcile it rewrites the cpusets
// the plan gives the workloads of the shared and BE pools to the partitions
// the balancer chose; every interval it measures and decides again. The
// decision itself is pkg/balancer's; this file measures and remembers.

// balancerGroup is one cgroup balanced in this reconcile.
type balancerGroup struct {
	name       string
	cgroup     string               // measured here
	containers []workload.Container // written here
	allowed    cpuset.CPUSet
	state      int // index in Desired.Workloads; -1 for a cgroup that is no workload
}

type balancerRunner struct {
	a      *Agent
	opts   BalancerOptions
	reader probe.Reader
	off    bool // disabled: only the restore at start ran
	last   *probe.Sample
	// resample asks for the window to start again after this reconcile's
	// writes.
	resample bool
	rec      balancerRecord
	saved    string
	placed   map[string]balancer.Placement // the last decision, by group
	written  map[string]string             // cpuset.cpus given to each group
	// wideMems is the cpuset.mems of each group not settled; runs counts
	// the memory locality runs of its placement, retry marks those to run
	// again.
	wideMems map[string]string
	runs     map[string]int
	retry    map[string]bool
	groups   []balancerGroup // this reconcile's
	metrics  *balancerMetrics
	warned   map[string]bool // log lines said once
}

// balance is the reconcile's step for the NUMA balancer, right after the
// decision: it measures and decides when an interval has passed, then
// gives the balanced workloads their partitions' cpusets and writes those
// of the other balanced cgroups. Disabled, it restores at the first
// reconcile what an earlier run wrote outside the workloads.
func (a *Agent) balance(rs []resolved, d decide.Desired) decide.Desired {
	o := a.opts.NUMABalancer
	if !o.Enabled || a.opts.Once || a.opts.DryRun {
		if a.bal == nil {
			a.bal = &balancerRunner{a: a, off: true}
			if o.Enabled {
				a.log.Info("numa balancer: not under --once or --dry-run (it needs a measuring window)")
			} else if !a.opts.DryRun {
				a.bal.restoreAll()
			}
		}
		return d
	}
	if a.bal == nil || a.bal.off {
		a.bal = newBalancerRunner(a, o.withDefaults())
	}
	return a.bal.step(rs, d)
}

func newBalancerRunner(a *Agent, o BalancerOptions) *balancerRunner {
	r := &balancerRunner{a: a, opts: o, reader: probe.Reader{ProcRoot: a.opts.ProcRoot, SysfsRoot: a.opts.SysfsRoot, H: a.h},
		placed: map[string]balancer.Placement{}, written: map[string]string{}, warned: map[string]bool{},
		wideMems: map[string]string{}, runs: map[string]int{}, retry: map[string]bool{},
		metrics: newBalancerMetrics(a.metrics.reg)}
	r.rec = r.load()
	r.saved = r.rec.view()
	a.log.Info("numa balancer on", "interval", o.Interval, "partition", o.Partition, "cgroups", strings.Join(o.Cgroups, ","),
		"minDwell", o.Config.MinDwell, "maxMoves", o.Config.MaxMoves, "overflow", o.Config.Overflow)
	return r
}

func (r *balancerRunner) step(rs []resolved, d decide.Desired) decide.Desired {
	r.groups = r.collect(rs, d)
	parts := balancer.Partitions(r.a.topo, r.opts.Partition, d.Pools.Shared)
	if len(r.placed) == 0 && len(r.rec.State.Groups) > 0 {
		// Restarted: the placements recorded stay in force until the first
		// window is measured, so a restart moves nothing.
		var gs []balancer.Group
		for _, g := range r.groups {
			gs = append(gs, balancer.Group{Name: g.name, Allowed: g.allowed})
		}
		for _, p := range balancer.Placements(r.rec.State, parts, gs) {
			r.placed[p.Group] = p
		}
	}
	now := r.a.now()
	if len(parts) > 0 && (r.last == nil || now.Sub(r.last.At) >= r.opts.Interval*9/10) {
		r.sample(parts)
		r.a.wake(r.opts.Interval)
	}
	r.settle()
	d = r.apply(d)
	r.save()
	return d
}

// collect lists the groups: workloads in the shared or BE pool, then the
// children of the configured parents that are no workload's cgroup.
func (r *balancerRunner) collect(rs []resolved, d decide.Desired) []balancerGroup {
	byName := map[string]*resolved{}
	taken := map[string]bool{}
	for i := range rs {
		byName[rs[i].spec.Name], taken[rs[i].cgroup] = &rs[i], true
	}
	var out []balancerGroup
	for i, st := range d.Workloads {
		w := byName[st.Name]
		if w == nil || w.plan.Terminating || (st.Pool != "shared" && st.Pool != "be") {
			continue // a terminating pod is written no more
		}
		allowed := d.Pools.Shared
		if st.Pool == "be" {
			allowed = d.Pools.BE
		}
		out = append(out, balancerGroup{name: st.Name, cgroup: st.Cgroup, containers: w.plan.Containers, allowed: allowed, state: i})
	}
	for _, parent := range r.opts.Cgroups {
		children, err := r.a.h.Children(cgroup.CPUSet, parent)
		if err != nil {
			r.warnOnce("children:"+parent, "numa balancer: cannot list the cgroups under "+parent, err)
			continue
		}
		for _, c := range children {
			if !taken[c] {
				out = append(out, balancerGroup{name: c, cgroup: c, containers: []workload.Container{{Name: c, Cgroup: c}},
					allowed: d.Pools.Shared, state: -1})
			}
		}
	}
	return out
}

// read takes a sample of the CPUs and every group; false if /proc/stat
// could not be read.
func (r *balancerRunner) read() (probe.Sample, bool) {
	s := probe.Sample{At: r.a.now(), Groups: map[string]probe.GroupSample{}}
	var err error
	if s.CPUs, err = r.reader.CPUStat(); err != nil {
		r.warnOnce("cpustat", "numa balancer: cannot read CPU times", err)
		return s, false
	}
	for _, g := range r.groups {
		gs, err := r.reader.Group(g.cgroup)
		if err != nil {
			r.warnOnce("group:"+g.name, "numa balancer: cannot measure "+g.name, err)
			continue
		}
		s.Groups[g.name] = gs
	}
	return s, true
}

// sample ends the window that began with the last sample and decides on
// it. The next window begins once this reconcile's cgroup writes are done
// (afterWrite), so no window mixes two cpusets of a group.
func (r *balancerRunner) sample(parts []balancer.Partition) {
	s, ok := r.read()
	if !ok {
		return
	}
	prev := r.last
	r.last, r.resample = &s, true
	if prev == nil {
		return
	}
	mem, err := r.reader.NodeMemory(localityloop.MemoryNodes(r.a.topo))
	if err != nil {
		r.warnOnce("meminfo", "numa balancer: cannot read free memory", err)
		return
	}
	allowed := map[string]cpuset.CPUSet{}
	for _, g := range r.groups {
		allowed[g.name] = g.allowed
	}
	ps, gs := probe.Window(parts, *prev, s)
	for i := range gs {
		gs[i].Allowed = allowed[gs[i].Name]
	}
	in := balancer.Input{Now: s.At, Partitions: ps, Distance: r.a.topo.Distance, Memory: mem, Groups: gs}
	r.decided(balancer.Decide(r.opts.Config, r.rec.State, in), in)
}

// afterWrite starts the next window once the reconcile that decided has
// written the cgroups.
func (r *balancerRunner) afterWrite() {
	if !r.resample {
		return
	}
	r.resample = false
	if s, ok := r.read(); ok {
		r.last = &s
	}
}

// decided takes in a decision: events for what moved and why, metrics.
func (r *balancerRunner) decided(d balancer.Decision, in balancer.Input) {
	prev := r.rec.State
	r.rec.State = d.State
	r.placed = map[string]balancer.Placement{}
	for _, p := range d.Placements {
		r.placed[p.Group] = p
	}
	for _, m := range d.Moves {
		reason := "NUMABalancerPlaced"
		if len(m.From) > 0 {
			reason = "NUMABalancerMoved"
		}
		r.a.events.Emit(eventlog.Normal, reason, m.Group, "%s", m.Reason)
	}
	for _, p := range d.Partitions {
		switch was := prev.Overflow[p.Name]; {
		case p.Overflow && !was:
			r.a.events.Emit(eventlog.Normal, "NUMABalancerOverflow", "", "partition %s is saturated (%.1f of %.0f CPUs predicted): its groups %s may use the whole pool",
				p.Name, p.Predicted, p.Capacity, strings.Join(p.Groups, ","))
		case !p.Overflow && was:
			r.a.events.Emit(eventlog.Normal, "NUMABalancerOverflowEnded", "", "partition %s is no longer saturated (%.1f of %.0f CPUs predicted): its groups keep to its CPUs",
				p.Name, p.Predicted, p.Capacity)
		}
	}
	r.metrics.observe(d, in)
}

func (r *balancerRunner) warnOnce(key, msg string, err error) {
	if !r.warned[key] {
		r.warned[key] = true
		r.a.log.Warn(msg, "err", err)
	}
}

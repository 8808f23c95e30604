// Package balancerloop is the NUMA balancer between reconciles: every
// reconcile it tells the decision (pkg/decide, Observation.Balanced) where
// the groups of the shared and BE pools are placed, and the decision gives
// them their partitions' cpusets; every interval it measures and decides
// again. The decision itself is pkg/balancer's; this package measures and
// remembers, and writes nothing: the cgroups it balances outside the
// workloads (--numa-balancer-cgroups) are written and restored by the
// executor, from the decision, too. The agent hands it what it needs
// (Deps) and calls Observe once per reconcile, right before the decision,
// and AfterWrite once the decision's cgroups are written.
package balancerloop

import (
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/balancer/probe"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/topology"
)

// Runner is the balancer between reconciles.
type Runner struct {
	d      Deps
	opts   Options
	reader probe.Reader
	off    bool // disabled: only the restore at start ran
	last   *probe.Sample
	// resample asks for the window to start again after this reconcile's
	// writes.
	resample bool
	rec      record
	saved    string
	placed   map[string]balancer.Placement // the last decision, by group
	written  map[string]string             // cpuset.cpus given to each group
	// wideMems is the cpuset.mems of each group not settled; runs counts
	// the memory locality runs of its placement, retry marks those to run
	// again.
	wideMems map[string]string
	runs     map[string]int
	retry    map[string]bool
	// groups are this window's: wgroups the workloads the last decision
	// left in the pools, and the cgroups in extra, found under the
	// configured parents this reconcile; shared is that decision's shared
	// pool. ws are this reconcile's workloads.
	groups, wgroups []group
	extra           []string
	shared          cpuset.CPUSet
	ws              []Workload
	// released are the cgroups the decision restores this reconcile;
	// disabling, of an off runner, that they are the last of its record.
	released  []string
	disabling bool
	metrics   *metrics
	warned    map[string]bool // log lines said once
}

// NewOff is the balancer off, made at the first reconcile. Asked for where
// it cannot run (under --once or --dry-run) it says so; turned off, its
// first Observe releases what an earlier run wrote outside the workloads,
// unless dryRun.
func NewOff(d Deps, asked, dryRun bool) *Runner {
	r := &Runner{d: d, off: true, disabling: !asked && !dryRun}
	if asked {
		d.Log.Info("numa balancer: not under --once or --dry-run (it needs a measuring window)")
	}
	return r
}

// Off is true for a runner made by NewOff.
func (r *Runner) Off() bool { return r.off }

// New is the balancer on, with o's zero fields defaulted.
func New(o Options, d Deps) *Runner {
	o = o.withDefaults()
	r := &Runner{d: d, opts: o, reader: probe.Reader{ProcRoot: d.ProcRoot, SysfsRoot: d.SysfsRoot, H: d.H},
		placed: map[string]balancer.Placement{}, written: map[string]string{}, warned: map[string]bool{},
		wideMems: map[string]string{}, runs: map[string]int{}, retry: map[string]bool{},
		metrics: newMetrics(d.Metrics)}
	r.rec = r.load()
	r.saved = r.rec.view()
	d.Log.Info("numa balancer on", "interval", o.Interval, "partition", o.Partition, "cgroups", strings.Join(o.Cgroups, ","),
		"minDwell", o.Config.MinDwell, "maxMoves", o.Config.MaxMoves, "overflow", o.Config.Overflow)
	return r
}

// Observe is the balancer's part of a reconcile's observation, right
// before the decision: it measures and decides when an interval has passed
// (on the groups and pools of the last decision), and returns where the
// groups go, for the decision to give them their cpusets. An off runner
// returns, once, the cgroups an earlier run wrote outside the workloads,
// to be restored.
func (r *Runner) Observe(in Input) decide.Balanced {
	if r.off {
		if !r.disabling {
			return decide.Balanced{}
		}
		return r.releaseAll()
	}
	r.ws, r.extra = in.Workloads, r.listExtra(in.Workloads)
	r.groups = append(r.stillHere(), r.extraGroups()...)
	pool := r.shared
	if pool.IsEmpty() {
		pool = in.Topology.CPUSet() // no decision yet: the first window only starts
	}
	parts := balancer.Partitions(in.Topology, r.opts.Partition, pool)
	if len(r.placed) == 0 && len(r.rec.State.Groups) > 0 {
		r.restarted(in.Topology)
	}
	now := r.d.Now()
	if len(parts) > 0 && (r.last == nil || now.Sub(r.last.At) >= r.opts.Interval*9/10) {
		r.sample(parts, in.Topology, in.MemoryNodes)
		r.d.Wake(r.opts.Interval)
	}
	r.settle(in.LastRun)
	b := r.placements()
	r.save()
	return b
}

// read takes a sample of the CPUs and every group; false if /proc/stat
// could not be read.
func (r *Runner) read() (probe.Sample, bool) {
	s := probe.Sample{At: r.d.Now(), Groups: map[string]probe.GroupSample{}}
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
func (r *Runner) sample(parts []balancer.Partition, topo *topology.Topology, memNodes []int) {
	s, ok := r.read()
	if !ok {
		return
	}
	prev := r.last
	r.last, r.resample = &s, true
	if prev == nil {
		return
	}
	mem, err := r.reader.NodeMemory(memNodes)
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
	in := balancer.Input{Now: s.At, Partitions: ps, Distance: topo.Distance, Memory: mem, Groups: gs}
	r.planned(balancer.Place(r.opts.Config, r.rec.State, in), in)
}

// afterWrite starts the next window once the reconcile that decided has
// written the cgroups.
func (r *Runner) afterWrite() {
	if !r.resample {
		return
	}
	r.resample = false
	if s, ok := r.read(); ok {
		r.last = &s
	}
}

// planned takes in the balancer's plan: events for what moved and why, metrics.
func (r *Runner) planned(d balancer.Plan, in balancer.Input) {
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
		r.d.Events.Emit(eventlog.Normal, reason, m.Group, "%s", m.Reason)
	}
	for _, p := range d.Partitions {
		switch was := prev.Overflow[p.Name]; {
		case p.Overflow && !was:
			r.d.Events.Emit(eventlog.Normal, "NUMABalancerOverflow", "", "partition %s is saturated (%.1f of %.0f CPUs predicted): its groups %s may use the whole pool",
				p.Name, p.Predicted, p.Capacity, strings.Join(p.Groups, ","))
		case !p.Overflow && was:
			r.d.Events.Emit(eventlog.Normal, "NUMABalancerOverflowEnded", "", "partition %s is no longer saturated (%.1f of %.0f CPUs predicted): its groups keep to its CPUs",
				p.Name, p.Predicted, p.Capacity)
		}
	}
	r.metrics.observe(d, in)
}

func (r *Runner) warnOnce(key, msg string, err error) {
	if !r.warned[key] {
		r.warned[key] = true
		r.d.Log.Warn(msg, "err", err)
	}
}

package agent

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/agent/plan"
	"github.com/locus-project/locus/pkg/agent/state"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology"
)

// Result is what one reconcile did.
type Result struct {
	Writes   int                // cgroup files written
	Planned  []cgroup.FileWrite // --dry-run: the writes it would make
	Errors   []error            // failed writes or state updates
	Problems []plan.Problem     // workloads it could not fully serve
}

// leasePrefix names the CPUs `locus run` holds; no workload name can start
// with it.
const leasePrefix = "lease:"

// Reconcile brings the node to the config once: it removes workloads no
// longer configured, prepares the others (cgroups, processes), decides CPUs
// and memory QoS, saves the decision, then writes cgroups.
func (a *Agent) Reconcile() Result {
	start := time.Now()
	var res Result
	defer func() {
		a.metrics.duration.Observe(time.Since(start).Seconds())
		if len(res.Errors) > 0 {
			a.metrics.errors.Inc()
		}
	}()
	if t, err := topology.Discover(a.opts.SysfsRoot); err == nil {
		a.topo = t
	}
	cfg, err := a.cfg.load(len(a.topo.CPUs))
	if err != nil {
		a.events.Emit(Warning, "ConfigInvalid", "", "%v; keeping the last good config", err)
	}
	ck, err := a.store.Load()
	if err != nil {
		res.Errors = append(res.Errors, err)
		return res
	}
	rs := resolveWorkloads(cfg.host)
	keep := map[string]bool{}
	byName := map[string]*resolved{}
	for i := range rs {
		keep[rs[i].cgroup], byName[rs[i].spec.Name] = true, &rs[i]
	}
	for _, name := range sortedKeys(ck.Workloads) {
		if r, ok := byName[name]; ok && r.cgroup == ck.Workloads[name].Cgroup {
			continue
		}
		if err := a.removeWorkload(name, ck.Workloads[name], keep, &res); err != nil {
			res.Errors = append(res.Errors, err)
			a.events.Emit(Warning, "RemoveFailed", name, "%v; retrying on the next reconcile", err)
		}
	}
	if !a.opts.DryRun {
		if ck, err = a.store.Load(); err != nil {
			res.Errors = append(res.Errors, err)
			return res
		}
	}

	ready := map[string]bool{}
	for i := range rs {
		r := &rs[i]
		entry, ok := ck.Workloads[r.spec.Name]
		if ok && entry.Cgroup != r.cgroup {
			r.problems = append(r.problems, plan.Problem{Workload: r.spec.Name, Reason: "RemovalPending",
				Message: fmt.Sprintf("its previous cgroup %s is not removed yet", entry.Cgroup)})
			continue
		}
		if !ok {
			entry = state.Workload{Cgroup: r.cgroup}
			a.saveEntry(r.spec.Name, entry) // intent first: a crash then still knows to clean up
		}
		ok, probs := a.prepare(r, &entry)
		ready[r.cgroup] = ok
		r.problems = append(r.problems, probs...)
		ck.Workloads[r.spec.Name] = entry
	}

	var d plan.Desired
	decide := func(c *state.Checkpoint) error {
		d = plan.Compute(a.planInput(cfg, rs, c))
		for name := range d.Assignments {
			if strings.HasPrefix(name, leasePrefix) {
				delete(d.Assignments, name)
			}
		}
		c.Assignments = d.Assignments
		return nil
	}
	prev := ck.Assignments
	if a.opts.DryRun {
		_ = decide(&ck)
	} else if err := a.store.Update(decide); err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("save checkpoint: %w", err))
		return res
	}
	a.reportAssignments(prev, d.Assignments)
	a.debugDelay()

	owner := map[string]string{}
	for _, r := range rs {
		owner[r.cgroup] = r.spec.Name
	}
	var ops []cgroup.Op
	for _, op := range d.Ops {
		if ready[op.Cgroup] {
			ops = append(ops, op)
		}
	}
	var restores []cgroup.Target
	for _, t := range d.Restores {
		if ready[t.Cgroup] {
			restores = append(restores, t)
		}
	}
	a.writeBatches(batches(ops, restores), owner, &res)

	res.Problems = a.collectProblems(rs, d)
	if !a.opts.DryRun {
		st := a.buildStatus(cfg, rs, d, ck)
		a.metrics.setWorkloads(st.Workloads)
		if err := writeStatus(a.opts.StateDir, st); err != nil {
			res.Errors = append(res.Errors, fmt.Errorf("write status: %w", err))
		}
		a.setStatus(st)
	}
	return res
}

// planInput builds the decision's input: the configured workloads, the
// assignments in force, and the CPUs `locus run` leases, which count as
// decided elsewhere. Every lease counts: one whose owner died may still have
// its command running, and `locus run` itself collects stale ones.
func (a *Agent) planInput(cfg *config, rs []resolved, c *state.Checkpoint) plan.Input {
	in := plan.Input{Topology: a.topo, Reserved: cfg.reserved, BEPool: cfg.bePool,
		UnrestrictedMems: cfg.host.UnrestrictedMems, Previous: c.Assignments, MemQoS: cfg.memQoS,
		MemQoSOptions: memqos.Options{V1SoftLimitForLow: a.opts.V1SoftLimitForLow}}
	for _, r := range rs {
		in.Workloads = append(in.Workloads, r.plan)
	}
	for _, key := range sortedKeys(c.Leases) {
		l := c.Leases[key]
		in.Workloads = append(in.Workloads, plan.Workload{Name: leasePrefix + key, CPU: plan.CPUNeed{
			Exclusive: true, CPUs: l.Assignment.CPUs.Size(), Policy: l.Assignment.Policy,
			RequestMilli: l.Assignment.RequestMilli, Decided: l.Assignment.CPUs}})
	}
	return in
}

// reportAssignments emits an event for each workload whose CPUs changed.
func (a *Agent) reportAssignments(prev, next map[string]plan.Assignment) {
	for _, name := range sortedKeys(next) {
		n := next[name]
		if p, ok := prev[name]; ok && p.CPUs.Equals(n.CPUs) {
			continue
		}
		a.events.Emit(Normal, "CPUsAssigned", name, "bound to CPUs %s (NUMA nodes %v), policy %s",
			n.CPUs, a.topo.NodesOf(n.CPUs), n.Policy)
	}
	for _, name := range sortedKeys(prev) {
		if _, ok := next[name]; !ok {
			a.events.Emit(Normal, "CPUsReleased", name, "CPUs %s released", prev[name].CPUs)
		}
	}
}

// collectProblems gathers every problem of this reconcile and emits an
// event for each one that is new since the last.
func (a *Agent) collectProblems(rs []resolved, d plan.Desired) []plan.Problem {
	var all []plan.Problem
	for _, r := range rs {
		all = append(all, r.problems...)
	}
	for _, p := range d.Problems {
		if !strings.HasPrefix(p.Workload, leasePrefix) {
			all = append(all, p)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Workload < all[j].Workload })
	seen := map[string]bool{}
	for _, p := range all {
		key := p.Workload + "\x00" + p.Reason + "\x00" + p.Message
		seen[key] = true
		if !a.lastProblems[key] {
			a.events.Emit(Warning, p.Reason, p.Workload, "%s", p.Message)
		}
	}
	a.lastProblems, a.lastProblemList = seen, all
	return all
}

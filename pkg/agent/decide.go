package agent

import (
	"fmt"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/rebalance/probe"
	"github.com/locus-project/locus/pkg/runner"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// decide decides under the checkpoint lock, so that `locus run` never hands
// out the same CPUs: it drops the leases of runs that died and left nothing
// running, decides on the assignments in force, and saves them when they or
// the leases changed. A dry run decides on ck and saves nothing. ws are rs's plans.
func (a *Agent) decide(cfg *workload.Config, rs []resolved, ws []workload.Workload, ready map[string]bool, ck state.Checkpoint) (decide.Ready, error) {
	if a.opts.DryRun {
		return a.decideOn(a.observation(cfg, rs, ws, ready, ck, nil), ck), nil
	}
	unlock, err := a.store.Lock()
	if err != nil {
		return decide.Ready{}, fmt.Errorf("save checkpoint: %w", err)
	}
	defer unlock()
	c, err := a.store.Load()
	if err != nil {
		return decide.Ready{}, err
	}
	// A lease of a dead owner still counts while its cgroup has processes:
	// its command may outlive `locus run`. Once the cgroup is empty or gone
	// nobody will release it, so it is dropped here, as `locus run` does.
	dropped := runner.DropStale(&c, a.h)
	r := a.decideOn(a.observation(cfg, rs, ws, ready, c, dropped), c)
	if r.Save {
		c.Assignments, c.QuotaRaises, c.MemsFollowing = r.Kept()
		if err := a.store.Save(c); err != nil {
			return decide.Ready{}, fmt.Errorf("save checkpoint: %w", err)
		}
	}
	return r, nil
}

// decideOn decides with the checkpoint's assignments as those in force. The
// memory it returns is kept once the reconcile has told its Events.
func (a *Agent) decideOn(obs decide.Observation, c state.Checkpoint) decide.Ready {
	return decide.Decide(obs, a.mem.From(c.Assignments, c.QuotaRaises, c.MemsFollowing))
}

// observation is what this reconcile saw, as the decision takes it.
func (a *Agent) observation(cfg *workload.Config, rs []resolved, ws []workload.Workload, ready map[string]bool, c state.Checkpoint, dropped map[string]state.Lease) decide.Observation {
	obs := decide.Observation{Topology: a.topo, Config: cfg, Leases: runner.LeasesOf(c.Leases), Dropped: runner.LeasesOf(dropped), Now: a.now(),
		Prepared: ready, Balanced: a.balanced, V1SoftLimitForLow: a.opts.V1SoftLimitForLow, ThrottleNotBelowRequest: a.opts.ThrottleNotBelowRequest, CPUIdle: a.cpuIdle, NarrowingMigrates: a.h.NarrowingMigrates()}
	if st, read := a.kube.State(); read {
		obs.Kubelet, obs.Problems = decide.FromKubelet(st)
	}
	obs.Workloads = ws // the reconcile's one copy of the plans: a workload is a large value
	for _, r := range rs {
		obs.Problems = append(obs.Problems, r.problems...)
	}
	obs.Burst = a.burst.Observe(cfg, obs.Workloads, c.QuotaRaises) // it only reads them: no second copy
	return probe.Observe(obs, a.h, c.Assignments)
}

// emit publishes Events a decision made.
func (a *Agent) emit(es []eventlog.Event) {
	for _, e := range es {
		a.events.Emit(e.Type, e.Reason, e.Workload, "%s", e.Message)
	}
}

// refreshTopology discovers the topology again only when its stamp
// (topology.Stamp) changed, so a resync reads four small files instead of
// the whole CPU tree. A failed discovery keeps the topology in force.
func (a *Agent) refreshTopology() error {
	stamp := topology.Stamp(a.opts.SysfsRoot)
	if a.topo != nil && stamp == a.topoStamp {
		return nil
	}
	t, err := topology.Discover(a.opts.SysfsRoot)
	if err != nil {
		return err
	}
	a.topo, a.topoStamp = t, stamp
	return nil
}

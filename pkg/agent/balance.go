package agent

import (
	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/localityloop"
	"github.com/locus-project/locus/pkg/state"
)

// balance is the NUMA balancer's part of the observation, right before the
// decision; disabled, it releases what an earlier run wrote (balancerloop).
func (a *Agent) balance(rs []resolved) decide.Balanced {
	o := a.opts.NUMABalancer
	if !o.Enabled || a.opts.Once || a.opts.DryRun {
		if a.bal == nil {
			a.bal = balancerloop.NewOff(a.balancerDeps(), o.Enabled, a.opts.DryRun)
		}
		return a.bal.Observe(balancerloop.Input{})
	}
	if a.bal == nil || a.bal.Off() {
		a.bal = balancerloop.New(o, a.balancerDeps())
	}
	ws := make([]balancerloop.Workload, len(rs))
	for i := range rs {
		ws[i] = balancerloop.Workload{Name: rs[i].spec.Name, Cgroup: rs[i].cgroup, Containers: rs[i].plan.Containers,
			Terminating: rs[i].plan.Terminating}
	}
	return a.bal.Observe(balancerloop.Input{Workloads: ws, Topology: a.topo, MemoryNodes: localityloop.MemoryNodes(a.topo),
		LastRun: a.lastLocalityRun()})
}

func (a *Agent) balancerDeps() balancerloop.Deps {
	return balancerloop.Deps{H: a.h, Originals: a.originals, Events: a.events, Log: a.log, Now: a.now,
		Wake: a.wake, Metrics: a.metrics.Reg, Load: state.RecordLoader(a.log, a.opts.StateDir),
		StateDir: a.opts.StateDir, ProcRoot: a.opts.ProcRoot, SysfsRoot: a.opts.SysfsRoot}
}

// lastLocalityRun reads the memory locality worker's last run of a
// workload; nil while there is no worker.
func (a *Agent) lastLocalityRun() func(name string) (balancerloop.Run, bool) {
	loc := a.loc
	if loc == nil {
		return nil
	}
	return func(name string) (balancerloop.Run, bool) {
		rec := loc.Record(name)
		if rec == nil {
			return balancerloop.Run{}, false
		}
		return balancerloop.Run{CPUs: rec.CPUs, Ran: rec.Ran, Reason: rec.Last.Reason}, true
	}
}

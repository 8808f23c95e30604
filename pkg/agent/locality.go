package agent

import (
	"time"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/localityloop"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// LocalityFile is localityloop.File, under the state directory.
const LocalityFile = localityloop.File

// scheduleLocality is the reconcile's step for memory locality, once the cgroups are written: it reports bad
// annotations as the workloads' problems and queues the migrations due (moved workloads' too); ws are rs's plans,
// failed names whose writes failed. Under --once and --dry-run nothing runs: a migration outlives a reconcile.
func (a *Agent) scheduleLocality(cfg *workload.Config, rs []resolved, ws []workload.Workload, d decide.Desired, moved []string, failed func(string) bool) {
	nodes := localityloop.MemoryNodes(a.topo)
	targets, probs := localityloop.Targets(ws, d.Workloads, cfg.Locality, nodes)
	targets = localityloop.WithMoved(targets, ws, d.Workloads, moved, nodes)
	if a.bal != nil {
		// AfterWrite starts the balancer's next measuring window and gives
		// the groups it placed whose memory must follow.
		targets = localityloop.WithBalancer(targets, a.bal.AfterWrite(d, failed), nodes)
	}
	for _, p := range probs {
		for i := range rs {
			if rs[i].spec.Name == p.Workload {
				rs[i].problems = append(rs[i].problems, p)
			}
		}
	}
	if a.opts.DryRun || a.opts.Once {
		return
	}
	if a.loc == nil {
		a.loc = newLocalityRunner(a, localityloop.KernelMigrator{})
	}
	a.loc.Schedule(targets, a.now())
}

// newLocalityRunner starts the memory locality worker on the agent's
// cgroups, events, clock and options, with the last runs of LocalityFile.
func newLocalityRunner(a *Agent, m localityloop.Migrator) *localityloop.Runner {
	return localityloop.New(localityloop.Deps{Migrator: m, Cgroups: a.h, Events: a.events, Metrics: a.locMetrics,
		Log: a.log, Now: func() time.Time { return a.now() }, Wake: func() { a.wake(0) }, Load: state.RecordLoader(a.log, a.opts.StateDir),
		StateDir: a.opts.StateDir, Options: locality.Options{ProcRoot: a.opts.ProcRoot, SysfsRoot: a.opts.SysfsRoot,
			Budget: a.opts.LocalityBudget, Margin: a.opts.LocalityMargin}})
}

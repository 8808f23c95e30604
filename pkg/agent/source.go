package agent

import (
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// FromPod marks a workload supplied by a WorkloadSource: its processes are
// put in their cgroups by someone else (the kubelet), so the agent only
// decides and writes, and never creates, starts or moves anything.
const FromPod status.Source = "pod"

// configInForce is the config the agent runs on and the error of the last
// look at it, whichever source gave them: status and shutdown read it.
type configInForce struct {
	good    *workload.Config
	lastErr string
}

// loadWorkloads gives this reconcile's config and workloads, from the
// source or from the HostConfig.
func (a *Agent) loadWorkloads() (*workload.Config, []resolved) {
	if a.src == nil {
		cfg, err := a.file.Load(len(a.topo.CPUs))
		if err != nil {
			a.events.Emit(eventlog.Warning, "ConfigInvalid", "", "%v; keeping the last good config", err)
		}
		a.cfg.good, a.cfg.lastErr = cfg, a.file.LastErr()
		a.metrics.CountConfigError(err != nil, a.cfg.lastErr != "")
		return cfg, resolveWorkloads(cfg.Host, a.prep.CgroupPath)
	}
	cfg, snap := a.src.Load(source.Env{Topology: a.topo, Exists: a.cgroupExists, Cgroups: a.h, Early: a.exec.Early()})
	rs := make([]resolved, len(snap.Workloads))
	for i, w := range snap.Workloads {
		rs[i] = resolved{spec: hostconfig.Workload{Name: w.Plan.Name, Cgroup: w.Plan.Cgroup},
			source: FromPod, cgroup: w.Plan.Cgroup, class: w.Class, plan: w.Plan, problems: w.Problems}
	}
	rs = a.dropGone(rs)
	a.metrics.CountConfigError(snap.Error != "" && snap.Error != a.cfg.lastErr, snap.Error != "")
	// What the rest of the agent reads of the config in force (status,
	// shutdown) is kept as for a HostConfig.
	a.cfg.good, a.cfg.lastErr = cfg, snap.Error
	return cfg, rs
}

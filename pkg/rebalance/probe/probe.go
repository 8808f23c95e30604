// Package probe reads what the rebalancer (pkg/rebalance, through
// pkg/decide) decides on: the CPU time each pinned workload's cgroup has
// used. It reads, never writes.
package probe

import (
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/workload"
)

// Observe adds to obs the CPU time used so far by each of its workloads
// that holds CPUs in assigned (Observation.Usage), with rebalancing on;
// nothing is read otherwise. One small file a workload: cpuacct.usage on
// cgroup v1, cpu.stat on v2. A workload whose file cannot be read is left
// out, and so counts for no node in this sample.
func Observe(obs decide.Observation, h *cgroup.Hierarchy, assigned map[string]workload.Assignment) decide.Observation {
	if h == nil || obs.Config == nil || !obs.Config.MovesEnabled || !obs.Config.Rebalance {
		return obs
	}
	usage := make(map[string]time.Duration, len(assigned))
	for _, w := range obs.Workloads {
		if a, ok := assigned[w.Name]; !ok || a.CPUs.IsEmpty() || w.Cgroup == "" {
			continue
		}
		if used, err := h.CPUUsage(w.Cgroup); err == nil {
			usage[w.Name] = used
		}
	}
	obs.Usage = usage
	return obs
}

// Package probe reads what the moves (pkg/decide) and the rebalancer
// (pkg/rebalance, through pkg/decide) decide on: the resident memory of each
// movable workload per node, and the CPU time each pinned workload's cgroup
// has used. It reads, never writes.
package probe

import (
	"time"

	memprobe "github.com/locus-project/locus/pkg/balancer/probe"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/workload"
)

// Observe adds to obs what the moves read from the cgroups, nothing with
// the node's switch off: each movable workload's resident memory per node
// (Observation.Resident, what moving it costs the planner: memory.numa_stat,
// as the balancer's probe reads it), and with rebalancing on the CPU time
// used so far by each of its workloads that holds CPUs in assigned
// (Observation.Usage). One small file a workload: cpuacct.usage on cgroup
// v1, cpu.stat on v2. A workload whose file cannot be read is left out, and
// so counts for no node in this sample.
func Observe(obs decide.Observation, h *cgroup.Hierarchy, assigned map[string]workload.Assignment) decide.Observation {
	if h == nil || obs.Config == nil || !obs.Config.MovesEnabled {
		return obs
	}
	obs.Resident = memprobe.Reader{H: h}.Resident(obs.Config, obs.Workloads)
	if !obs.Config.Rebalance {
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

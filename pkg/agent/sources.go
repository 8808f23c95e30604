package agent

import (
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// prepare makes a workload's processes exist in its cgroup (pkg/hostsource);
// a pod's are the kubelet's. It returns problems (the workload keeps its
// decision but is not written) and whether the cgroup is there to be
// written.
func (a *Agent) prepare(r *resolved, entry *state.Workload) (ready bool, probs []workload.Problem) {
	if r.source == FromPod && (r.plan.Terminating || !a.cgroupExists(r.cgroup)) {
		// The source lists a pod only while its cgroup exists: one missing
		// now was removed since (the pod is going away), and a terminating
		// pod is written no more. Neither is a problem; the source drops
		// the pod at its next look once its cgroup is gone.
		return false, probs
	}
	return a.prep.Prepare(r.spec, r.cgroup, entry)
}

// cgroupExists checks the cgroup in the hierarchy that holds cpusets (v1)
// or the unified one (v2).
func (a *Agent) cgroupExists(rel string) bool { return a.h.ExistsInScope(cgroup.CPUSet, rel) }

func (a *Agent) procAlive(p *state.Process) bool { return a.prep.Alive(p) }

package decide

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// ReasonResourceStatusRefused is the problem of a pod whose decision made
// elsewhere (its signed resource-status) is not applied because the pod or
// the node does not allow it: the pod runs in the shared pool, and the
// message says which rule the decision broke.
const ReasonResourceStatusRefused = "ResourceStatusRefused"

// refuseDecisions holds every pod's decision (a need with Decided and a
// DecisionCheck) to what the pod's own text allows and to the CPUs a pod
// may hold, whoever wrote it: the pod opted in, is not BestEffort, and has
// whole CPU limits whose count is the decision's (or, once resized in
// place, the count the kubelet actuated, which the need asks for); its
// CPUs are neither reserved nor isolated. A refused decision leaves the
// pod in the shared pool. The kubelet's CPUs, offline CPUs, CPUs another
// workload holds, and the shared pool's floor (floorConflict) are checked
// where the decision is applied, against what is held then.
func refuseDecisions(t *topology.Topology, reserved cpuset.CPUSet, needs map[string]workload.CPUNeed) (map[string]workload.CPUNeed, []workload.Problem) {
	var problems []workload.Problem
	out := make(map[string]workload.CPUNeed, len(needs))
	for _, name := range slices.Sorted(maps.Keys(needs)) {
		need := needs[name]
		out[name] = need
		if need.Check == nil || need.Decided.IsEmpty() {
			continue
		}
		if why := decisionRefused(t, reserved, need); why != "" {
			out[name] = workload.CPUNeed{}
			problems = append(problems, workload.Problem{Workload: name, Reason: ReasonResourceStatusRefused,
				Message: fmt.Sprintf("annotation %s: %s; running in the shared pool", workload.AnnotationResourceStatus, why)})
		}
	}
	return out, problems
}

// decisionRefused says which rule a pod's decision breaks, or "".
func decisionRefused(t *topology.Topology, reserved cpuset.CPUSet, need workload.CPUNeed) string {
	c := need.Check
	switch {
	case !c.OptedIn:
		return fmt.Sprintf("the pod does not opt in to CPUs of its own (%s: \"true\")", workload.AnnotationCPUSet)
	case c.BestEffort:
		return "the pod is BestEffort: it never holds CPUs of its own"
	case c.LimitError != "":
		return "CPUs of its own need whole CPU limits: " + c.LimitError
	case need.CPUs != c.LimitCPUs:
		return fmt.Sprintf("it gives %d CPUs, but the pod's CPU limits come to %d", need.CPUs, c.LimitCPUs)
	}
	if both := need.Decided.Intersection(reserved); !both.IsEmpty() {
		return fmt.Sprintf("CPUs %s are reserved for the system", both)
	}
	if both := need.Decided.Intersection(t.Isolated); !both.IsEmpty() {
		return fmt.Sprintf("CPUs %s are isolated (isolcpus)", both)
	}
	return ""
}

// floorConflict says why applying a pod's decision would leave the shared
// pool below its floor, or "". The floor: shared workloads always keep a
// CPU no workload holds alone. Decisions never take reserved CPUs, so on a
// node with reserved CPUs those are that CPU (as under the kubelet's static
// CPU manager, computePools falls back to them); on a node without, the
// last CPU of the shared pool is never given away by a decision.
func floorConflict(t *topology.Topology, reserved, owned cpuset.CPUSet, st cpualloc.State, need workload.CPUNeed) string {
	online := t.CPUSet()
	if need.Check == nil || need.Policy == cpualloc.StaticBurst || !reserved.Intersection(online).Difference(owned).IsEmpty() {
		return ""
	}
	shared := online.Difference(t.Isolated).Difference(owned).Difference(need.Decided)
	if shared.Difference(st.Exclusive.Overlap(shared)).IsEmpty() {
		return fmt.Sprintf("annotation %s: CPUs %s would leave shared workloads no CPU: every other CPU is held alone, and the node has no reserved CPUs for them; running in the shared pool",
			workload.AnnotationResourceStatus, need.Decided)
	}
	return ""
}

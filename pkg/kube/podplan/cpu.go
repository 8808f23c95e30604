package podplan

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/agent/plan"
	cpualloc "github.com/locus-project/locus/pkg/cpuset"
	"github.com/locus-project/locus/pkg/topology"
)

// cpuNeed reads what the pod asks of the allocator. A valid resource-status
// annotation (the scheduler's decision) is applied as it is, opted in or not:
// the scheduler has already counted those CPUs as taken. Otherwise
// cpuset-scheduler "true" with an integer limits.cpu on every container asks
// the agent for that many CPUs. Anything malformed leaves the pod in the
// shared pool (or, for a bad decision, lets the agent choose) and says why.
func cpuNeed(pod *corev1.Pod, topo *topology.Topology, problem func(string, string, ...any)) plan.CPUNeed {
	optIn := strings.EqualFold(strings.TrimSpace(pod.Annotations[AnnotationCPUSet]), "true")
	raw, hasDecision := pod.Annotations[AnnotationResourceStatus]
	if !optIn && !hasDecision {
		return plan.CPUNeed{}
	}
	policy := policyOf(pod, problem)
	if hasDecision {
		rs, err := ParseResourceStatus(raw)
		if err == nil {
			p := rs.Policy
			if p == "" {
				p = policy
			}
			need := plan.CPUNeed{Exclusive: true, CPUs: rs.CPUs.Size(), Policy: p, Decided: rs.CPUs}
			if p == cpualloc.StaticBurst {
				need.RequestMilli = requestMilli(pod)
			}
			checkNUMA(rs, topo, problem)
			return need
		}
		then := "running in the shared pool"
		if optIn {
			then = "the agent chooses the CPUs itself"
		}
		problem("InvalidResourceStatus", "annotation %s: %v; %s", AnnotationResourceStatus, err, then)
		if !optIn {
			return plan.CPUNeed{}
		}
	}
	cpus, err := limitCPUs(pod)
	if err != nil {
		problem("InvalidCPULimit", "%s needs an integer resources.limits.cpu on every container, at least 1 in all: %v; running in the shared pool", AnnotationCPUSet, err)
		return plan.CPUNeed{}
	}
	need := plan.CPUNeed{Exclusive: true, CPUs: cpus, Policy: policy}
	// Only static-burst accounts for the request; for the other policies a
	// changed request would re-allocate for nothing.
	if policy == cpualloc.StaticBurst {
		need.RequestMilli = requestMilli(pod)
	}
	return need
}

// limitCPUs sums the containers' CPU limits, each of which must be whole.
func limitCPUs(pod *corev1.Pod) (int, error) {
	total := int64(0)
	for i, c := range pod.Spec.Containers {
		lim, ok := c.Resources.Limits[corev1.ResourceCPU]
		switch {
		case !ok:
			return 0, fmt.Errorf("spec.containers[%d] (%s) has none", i, c.Name)
		case lim.MilliValue()%1000 != 0:
			return 0, fmt.Errorf("spec.containers[%d] (%s) has %s", i, c.Name, lim.String())
		}
		total += lim.MilliValue() / 1000
	}
	if total < 1 {
		return 0, fmt.Errorf("the pod's limits add up to %d", total)
	}
	return int(total), nil
}

// requestMilli sums the containers' CPU requests.
func requestMilli(pod *corev1.Pod) int64 {
	total := int64(0)
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			total += q.MilliValue()
		}
	}
	return total
}

// checkNUMA reports a decision whose numaNodes are not where its CPUs are:
// the scheduler worked from a picture of the node that is not this one. The
// CPUs are applied all the same; they are what the pod was promised.
func checkNUMA(rs ResourceStatus, topo *topology.Topology, problem func(string, string, ...any)) {
	if rs.NUMANodes == nil || topo == nil {
		return
	}
	want := slices.Clone(rs.NUMANodes)
	slices.Sort(want)
	want = slices.Compact(want)
	got := topo.NodesOf(rs.CPUs)
	if !slices.Equal(want, got) {
		problem("CPUSetConflict", "annotation %s: numaNodes %v, but CPUs %s are on NUMA nodes %v of this node; binding to the CPUs",
			AnnotationResourceStatus, rs.NUMANodes, rs.CPUs, got)
	}
}

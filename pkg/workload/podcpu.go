package workload

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/topology"
)

// PodCPUNeed reads what the pod asks of the allocator; problem is told,
// with a reason and a message naming the field and the value, whatever is
// wrong and what was done instead. A resource-status annotation (the
// scheduler's decision) is believed only under the scheduler's signature
// for this pod on this node (trust, VerifyDecision); one without is
// UntrustedResourceStatus and counts for nothing. A believed decision that
// parses is asked for as it is, with what the pod's own text says of the
// CPUs it may hold (CPUNeed.Check), for pkg/decide to hold it to: the
// scheduler has already counted those CPUs as taken; once every
// container's status reports the CPU limit the kubelet actuated (the pod was
// resized in place), a count other than the decision's asks for the decided
// CPUs grown or shrunk to it. Otherwise cpuset-scheduler "true" with an
// integer limits.cpu on every app container, and on every init container
// or sidecar that has one (as actuated: see actuatedLimitCPUs), asks the agent for as
// many CPUs as Kubernetes counts the pod's limit (podLimitCPUs). A
// container-scope pod (AnnotationCPUScope) says each container's count
// too. Anything malformed leaves the pod in the shared pool (or, for a bad
// or untrusted decision, lets the agent choose; for a bad scope, its
// containers share its CPUs) and says why. A pod that gets CPUs of its own
// asks for its memory on their nodes too (PodMemory); memory it cannot
// read leaves it in the shared pool.
func PodCPUNeed(pod *corev1.Pod, topo *topology.Topology, trust Trust, problem func(string, string, ...any)) CPUNeed {
	need := podCPUNeed(pod, topo, trust, problem)
	if !need.Exclusive {
		return need
	}
	mem, err := PodMemory(pod)
	if err != nil {
		problem(ReasonInvalidMemoryRequest, "%v; running in the shared pool", err)
		return CPUNeed{}
	}
	need.Memory = mem
	return need
}

// podCPUNeed is PodCPUNeed without the memory.
func podCPUNeed(pod *corev1.Pod, topo *topology.Topology, trust Trust, problem func(string, string, ...any)) CPUNeed {
	optIn := OptedIn(pod)
	raw, hasDecision := pod.Annotations[AnnotationResourceStatus]
	if !optIn && !hasDecision {
		return CPUNeed{}
	}
	policy := policyOf(pod, problem)
	then := "running in the shared pool"
	if optIn {
		then = "the agent chooses the CPUs itself"
	}
	if hasDecision {
		if err := VerifyDecision(trust.Keys, pod, trust.Node); err != nil {
			problem(ReasonUntrustedResourceStatus, "annotation %s is not the scheduler's: %v; %s", AnnotationResourceStatus, err, then)
			hasDecision = false
		}
	}
	if hasDecision {
		rs, err := ParseResourceStatus(raw)
		if err == nil {
			return decidedNeed(pod, rs, policy, optIn, topo, problem)
		}
		problem("InvalidResourceStatus", "annotation %s: %v; %s", AnnotationResourceStatus, err, then)
	}
	if !optIn {
		return CPUNeed{}
	}
	cpus, err := actuatedLimitCPUs(pod)
	if err != nil {
		problem("InvalidCPULimit", "%s needs an integer resources.limits.cpu on every container, at least 1 in all: %v; running in the shared pool", AnnotationCPUSet, err)
		return CPUNeed{}
	}
	need := CPUNeed{Exclusive: true, CPUs: cpus, Policy: policy}
	// Only static-burst accounts for the request; for the other policies a
	// changed request would re-allocate for nothing.
	if policy == cpualloc.StaticBurst {
		need.RequestMilli = requestMilli(pod)
	}
	need.Containers = containerScope(pod, true, problem)
	return need
}

// ReasonUntrustedResourceStatus is the problem of a pod whose
// resource-status is not under the scheduler's signature for it on this
// node: written by someone else, copied from another pod, or on a node
// whose agent has no key.
const ReasonUntrustedResourceStatus = "UntrustedResourceStatus"

// decidedNeed is the need of a pod with a believed decision, and what the
// pod's text says of it (DecisionCheck). The scheduler's partition of a
// container-scope pod's CPUs is read only beside a believed decision.
func decidedNeed(pod *corev1.Pod, rs ResourceStatus, policy cpualloc.Policy, optIn bool, topo *topology.Topology,
	problem func(string, string, ...any)) CPUNeed {
	p := rs.Policy
	if p == "" {
		p = policy
	}
	need := CPUNeed{Exclusive: true, CPUs: rs.CPUs.Size(), Policy: p, Decided: rs.CPUs, Check: decisionCheck(pod, optIn)}
	if p == cpualloc.StaticBurst {
		need.RequestMilli = requestMilli(pod)
	} else if n, ok := reportedLimitCPUs(pod); ok {
		// Resized in place since the decision: the count the
		// kubelet reports actuated, grown or shrunk from the
		// decided CPUs.
		need.CPUs = n
	}
	checkNUMA(rs, topo, problem)
	need.Containers = containerScope(pod, true, problem)
	if raw, ok := pod.Annotations[AnnotationContainerCPUSets]; ok && need.Containers != nil {
		parts, err := ParseContainerCPUSets(raw, PodPartsBudget(pod, rs.CPUs))
		if err != nil {
			problem("InvalidContainerCPUSets", "annotation %s: %v; the agent divides the CPUs itself", AnnotationContainerCPUSets, err)
		} else {
			need.DecidedContainers = parts
		}
	}
	return need
}

// decisionCheck is what the pod's text says of the exclusive CPUs it may
// hold.
func decisionCheck(pod *corev1.Pod, optIn bool) *DecisionCheck {
	c := &DecisionCheck{OptedIn: optIn, BestEffort: KubeQoS(pod) == corev1.PodQOSBestEffort}
	if n, err := actuatedLimitCPUs(pod); err != nil {
		c.LimitError = err.Error()
	} else {
		c.LimitCPUs = n
	}
	return c
}

// OptedIn says whether the pod asks for CPUs of its own: cpuset-scheduler
// "true" as an annotation (the seed's way) or a label.
func OptedIn(pod *corev1.Pod) bool { return optedIn(pod.Labels, pod.Annotations) }

func optedIn(labels, annotations map[string]string) bool {
	for _, v := range []string{annotations[AnnotationCPUSet], labels[AnnotationCPUSet]} {
		if IsTrue(v) {
			return true
		}
	}
	return false
}

// AsksForCPUs says, from a pod's labels and annotations alone (what a
// runtime tells of a sandbox), whether it asks for CPUs of its own: opted
// in, or carrying a signed decision, valid or not (a decision without a
// signature is never applied).
func AsksForCPUs(labels, annotations map[string]string) bool {
	_, decided := annotations[AnnotationResourceStatus]
	_, signed := annotations[AnnotationDecisionSignature]
	return decided && signed || optedIn(labels, annotations)
}

// CPURequest is what an opted-in pod asks of the allocator, as the agent
// reads it: its integer CPU limits counted as Kubernetes counts the pod's
// (podLimitCPUs), the cpu-policy (named, never empty), for static-burst
// only the summed CPU requests, and for a container-scope pod
// (AnnotationCPUScope) each container's count, which the pod's CPUs are
// divided by (cpuset.Partition).
type CPURequest struct {
	CPUs         int
	Policy       cpualloc.Policy
	RequestMilli int64
	Containers   []cpualloc.ContainerCPUs
}

// ParseCPURequest reads an opted-in pod's request with the agent's rules,
// but strictly: where the agent falls back (a bad cpu-policy to the
// default, a bad limit to the shared pool) it returns an error saying what
// to fix, for a scheduler that must not place a pod it cannot bind.
func ParseCPURequest(pod *corev1.Pod) (CPURequest, error) {
	cpus, cs, err := podLimitCPUs(pod, false)
	if err != nil {
		return CPURequest{}, fmt.Errorf("%s needs an integer resources.limits.cpu on every container, at least 1 in all: %v", AnnotationCPUSet, err)
	}
	p, err := PolicyOf(pod.Annotations)
	if err != nil {
		return CPURequest{}, err
	}
	if p == "" {
		p = DefaultPolicy
	}
	container, err := CPUScopeOf(pod.Annotations)
	if err != nil {
		return CPURequest{}, err
	}
	req := CPURequest{CPUs: cpus, Policy: p}
	if container {
		req.Containers = cs
	}
	if p == cpualloc.StaticBurst {
		req.RequestMilli = requestMilli(pod)
	}
	return req, nil
}

// ScheduledCPUs reads the scheduler's decision on a pod (its resource-status
// annotation) as the agent applies it: the CPUs, the policy (the pod's
// cpu-policy when the decision names none) and, for static-burst, the
// request that counts on them. ok is false when the pod has none; err says
// why one does not parse.
func ScheduledCPUs(pod *corev1.Pod) (a Assignment, ok bool, err error) {
	raw, has := pod.Annotations[AnnotationResourceStatus]
	if !has {
		return Assignment{}, false, nil
	}
	rs, err := ParseResourceStatus(raw)
	if err != nil {
		return Assignment{}, false, err
	}
	p := rs.Policy
	if p == "" {
		p = policyOf(pod, func(string, string, ...any) {})
	}
	a = Assignment{CPUs: rs.CPUs, Policy: p}
	if p == cpualloc.StaticBurst {
		a.RequestMilli = requestMilli(pod)
	}
	return a, true, nil
}

// actuatedLimitCPUs is the pod's CPU count (podLimitCPUs) as the kubelet
// actuated it: a container resized in place (InPlacePodVerticalScaling)
// keeps its desired limit in spec and the one in force in its status's
// resources, and the CPUs follow the one in force. A container whose
// status reports no CPU limit (not started, or a kubelet without the
// feature) counts its spec's.
func actuatedLimitCPUs(pod *corev1.Pod) (int, error) {
	n, _, err := podLimitCPUs(pod, true)
	return n, err
}

// reportedLimitCPUs is the CPU count the kubelet reports actuated, when
// every app container's status reports a CPU limit and the pod's count
// is whole CPUs; ok is false otherwise.
func reportedLimitCPUs(pod *corev1.Pod) (n int, ok bool) {
	for _, c := range pod.Spec.Containers {
		reported := false
		for _, st := range pod.Status.ContainerStatuses {
			if st.Name == c.Name && st.Resources != nil {
				_, reported = st.Resources.Limits[corev1.ResourceCPU]
			}
		}
		if !reported {
			return 0, false
		}
	}
	n, err := actuatedLimitCPUs(pod)
	return n, err == nil
}

// requestMilli sums the containers' CPU requests.
func requestMilli(pod *corev1.Pod) int64 {
	total := int64(0)
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok && quantity.Bounded(&q) {
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

// policyOf reads cpu-policy; a bad value is a problem and the default applies.
func policyOf(pod *corev1.Pod, problem func(string, string, ...any)) cpualloc.Policy {
	p, err := PolicyOf(pod.Annotations)
	if err != nil {
		problem("InvalidCPUPolicy", "%v; using %s instead, the default", err, DefaultPolicy)
	}
	if p == "" {
		// Named, so that events and status say which policy applied.
		p = DefaultPolicy
	}
	return p
}

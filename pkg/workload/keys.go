package workload

import (
	"fmt"
	"strings"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// The annotation and label keys of workload text that Locus reads itself.
// They are read only in this package, so that a pod and a standalone
// workload mean the same by them. The values of the memoryQOS, cpuBurst and
// memoryLocality annotations are the sections of the node's SLO
// configuration of the same names, read by pkg/sloconfig's code for them.
const (
	// LabelQoSClass is the koordinator QoS class (LS, BE, LSR, LSE, SYSTEM).
	// LegacyQoSClass is older agents' key for it, as a label or an
	// annotation; the koordinator.sh key wins when both are set.
	LabelQoSClass  = "koordinator.sh/qosClass"
	LegacyQoSClass = "alibabacloud.com/qosClass"
	// AnnotationMemoryQoS is a pod's memory QoS policy and parameters
	// ({"policy": "auto"}); LegacyAnnotationMemoryQoS is older agents' key,
	// read when the koordinator.sh one is absent, whatever it says.
	AnnotationMemoryQoS       = "koordinator.sh/memoryQOS"
	LegacyAnnotationMemoryQoS = "alibabacloud.com/memoryQOS"
	// AnnotationMemoryLocality turns memory locality on or off for one pod
	// ({"policy": "bestEffort", "migrateIntervalMinutes": 10}).
	AnnotationMemoryLocality = "koordinator.sh/memoryLocality"
	// AnnotationCPUBurst is a pod's own CPU Burst fields ({"policy":
	// "auto"}), over its node's cpu-burst-config.
	AnnotationCPUBurst = "koordinator.sh/cpuBurst"
	// AnnotationCPUSet "true" (annotation or, on a pod, label too) opts a
	// workload in to exclusive CPUs: as many as its integer limits.cpu.
	AnnotationCPUSet = "cpuset-scheduler"
	// AnnotationCPUPolicy picks the allocation policy: static-burst,
	// full-pcpus-then-threads (the default), full-pcpus, spread-by-pcpus,
	// distribute-across-numa.
	AnnotationCPUPolicy = "cpu-policy"
	// AnnotationStopOnExit ("true") makes the agent stop a standalone
	// workload's process and remove its cgroup when the agent itself stops.
	AnnotationStopOnExit = "locus.io/stop-on-agent-exit"
	// AnnotationResourceStatus carries the scheduler's decision for a pod:
	// the exact CPUs it binds the pod to, chosen at cluster level together
	// with the node. The agent applies it instead of allocating on its own.
	// Format:
	//
	//	locus.io/resource-status: '{"cpuset": "0-3", "numaNodes": [0], "policy": "full-pcpus"}'
	//
	// cpuset (required) is a Linux CPU list; numaNodes (optional) are the
	// NUMA nodes the scheduler meant those CPUs to be on; policy (optional)
	// is the allocation policy it applied, one of the cpu-policy values.
	// Unknown fields are ignored, so a newer scheduler can add some.
	AnnotationResourceStatus = "locus.io/resource-status"
	// AnnotationCoreIsolation "true" asks that no other workload's task run
	// on the SMT siblings of the CPUs this one runs on while it runs (a core
	// scheduling cookie of its own); "false" refuses what its class's
	// cpuQOS.coreExpeller would give. Never for BE workloads.
	AnnotationCoreIsolation = "locus.io/core-isolation"
	// AnnotationMovable "true" lets the agent move the workload to other
	// CPUs, and its memory to their nodes, so that another fits ("false"
	// or absent: never). Only exactly "true" or "false".
	AnnotationMovable = "locus.io/movable"
)

// DefaultPolicy is the allocation policy of a workload that names none: the
// allocator's own default, whole cores first and then single threads. Pods
// carry it by name so that events and status say which policy applied.
const DefaultPolicy = cpualloc.FullPCPUsThenThreads

// ParsePolicy reads a policy as the scheduler writes it, exactly; "" is
// "none named" (the caller applies DefaultPolicy).
func ParsePolicy(s string) (cpualloc.Policy, error) {
	switch p := cpualloc.Policy(s); p {
	case "", cpualloc.StaticBurst, cpualloc.FullPCPUs, cpualloc.SpreadByPCPUs, cpualloc.DistributeAcrossNUMA,
		cpualloc.FullPCPUsThenThreads:
		return p, nil
	}
	return "", fmt.Errorf("%s is not one of static-burst, full-pcpus-then-threads, full-pcpus, spread-by-pcpus, distribute-across-numa", topology.Quote(s))
}

// PolicyOf reads the cpu-policy annotation as people write it, in any case
// and with blanks around; the error names the annotation and the value.
func PolicyOf(annotations map[string]string) (cpualloc.Policy, error) {
	p, err := ParsePolicy(strings.ToLower(strings.TrimSpace(annotations[AnnotationCPUPolicy])))
	if err != nil {
		return "", fmt.Errorf("annotation %s: %v", AnnotationCPUPolicy, err)
	}
	return p, nil
}

// IsTrue reads a boolean opt-in annotation: "true" in any case, trimmed.
func IsTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

// StopOnExit says whether a standalone workload asks to be stopped with the
// agent.
func StopOnExit(annotations map[string]string) bool {
	return IsTrue(annotations[AnnotationStopOnExit])
}

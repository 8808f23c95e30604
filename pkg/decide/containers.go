package decide

import (
	"fmt"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// containerParts divides the CPUs a container-scope pod holds among its
// containers (cpuset.Partition); nil for a pod whose containers share them.
// A division that cannot be made is a problem, and the containers share
// the CPUs; one that differs from the scheduler's is a problem naming
// both, and the agent's own applies: it is a pure function of what both
// read, so a difference means one of them read another pod or machine.
func containerParts(t *topology.Topology, w workload.Workload, a workload.Assignment) (map[string]cpuset.CPUSet, []workload.Problem) {
	if len(w.CPU.Containers) == 0 {
		return nil, nil
	}
	parts, err := cpualloc.Partition(t, a.CPUs, w.CPU.Containers)
	if err != nil {
		return nil, []workload.Problem{{Workload: w.Name, Reason: "ContainerCPUsNotDivided",
			Message: fmt.Sprintf("%s %s: the pod's CPUs %s cannot be divided among its containers: %v; they share them",
				workload.AnnotationCPUScope, workload.ScopeContainer, a.CPUs, err)}}
	}
	if d := w.CPU.DecidedContainers; d != nil && !workload.SameContainerCPUSets(d, parts) {
		return parts, []workload.Problem{{Workload: w.Name, Reason: "ContainerCPUSetsConflict",
			Message: fmt.Sprintf("annotation %s: the scheduler divided the pod's CPUs as %s, the agent as %s; applying the agent's",
				workload.AnnotationContainerCPUSets, cut(workload.FormatContainerCPUSets(d)), cut(workload.FormatContainerCPUSets(parts)))}}
	}
	return parts, nil
}

// maxPartition is how much of a partition a problem's message repeats: the
// annotation is pod text, up to 64 KiB.
const maxPartition = 512

func cut(s string) string {
	if len(s) <= maxPartition {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:maxPartition], len(s))
}

// partLists writes each container's part as a CPU list; nil for none.
func partLists(parts map[string]cpuset.CPUSet) map[string]string {
	if parts == nil {
		return nil
	}
	out := make(map[string]string, len(parts))
	for n, p := range parts {
		out[n] = p.String()
	}
	return out
}

// cpuFacts are what a workload's state and writes say of its CPUs.
type cpuFacts struct {
	list, mems string
	nodes      []int
}

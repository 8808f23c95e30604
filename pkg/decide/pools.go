package decide

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Pools are the CPU sets of workloads that hold no exclusive CPUs.
type Pools struct {
	Exclusive cpuset.CPUSet // union of every exclusive assignment
	Shared    cpuset.CPUSet // online - reserved - isolated - exclusive - kubelet
	BE        cpuset.CPUSet // the BE pool, inside Shared
	// Kubelet are the CPUs the kubelet's static CPU manager holds alone
	// (every online CPU when its checkpoint could not be read).
	Kubelet cpuset.CPUSet
	// Reserved are the reserved CPUs in force: the agent's, else the
	// kubelet's reservedSystemCPUs.
	Reserved cpuset.CPUSet
}

// computePools derives the pools from the assignments. bePool narrows the BE
// pool when set; if nothing of it is left, BE workloads fall back to Shared
// rather than to an empty (unwritable) cpuset. It leaves out the kubelet's
// CPUs too, even when the shared pool falls back to the reserved CPUs. With
// nothing left it is empty: shared workloads' cpusets are then left as they
// are.
func computePools(t *topology.Topology, reserved, kubelet, bePool cpuset.CPUSet, as map[string]workload.Assignment) (Pools, []workload.Problem) {
	var problems []workload.Problem
	// One set built from every exclusive CPU: a union per assignment made a
	// new set each time, quadratic in the assignments, and was 2.6 % of the
	// bytes the agent allocated under a 300-pod churn.
	var ids []int
	for _, a := range as {
		if a.Policy != cpualloc.StaticBurst {
			ids = append(ids, a.CPUs.UnsortedList()...)
		}
	}
	excl := cpuset.New(ids...)
	// The shared pool in one pass over the CPUs, not a set per difference.
	free := make([]int, 0, len(t.CPUs))
	for _, c := range t.CPUs {
		if !reserved.Contains(c.ID) && !t.Isolated.Contains(c.ID) && !kubelet.Contains(c.ID) && !excl.Contains(c.ID) {
			free = append(free, c.ID)
		}
	}
	shared := cpuset.New(free...)
	if shared.IsEmpty() {
		// Never write an empty cpuset: shared workloads run on the reserved
		// CPUs rather than fail.
		shared = reserved.Intersection(t.CPUSet()).Difference(kubelet)
		taken := "exclusive assignments take"
		if !kubelet.IsEmpty() {
			taken = fmt.Sprintf("exclusive assignments and the kubelet's CPUs %s take", kubelet)
		}
		problems = append(problems, workload.Problem{Reason: "SharedPoolEmpty", Message: fmt.Sprintf("%s every CPU; shared workloads run on reserved CPUs %q", taken, shared.String())})
	}
	be := shared
	if !bePool.IsEmpty() {
		if narrowed := bePool.Intersection(shared); !narrowed.IsEmpty() {
			be = narrowed
		} else {
			problems = append(problems, workload.Problem{Reason: "BEPoolEmpty", Message: fmt.Sprintf("bePool %s has no CPU left in the shared pool; BE workloads use the shared pool", bePool)})
		}
	}
	return Pools{Exclusive: excl, Shared: shared, BE: be, Kubelet: kubelet, Reserved: reserved}, problems
}

// Mems is the cpuset.mems value for a CPU set: the NUMA nodes of those CPUs, or
// every node when unrestricted.
func Mems(t *topology.Topology, cpus cpuset.CPUSet, unrestricted bool) string {
	var ids []string
	if unrestricted {
		for _, n := range t.Nodes {
			ids = append(ids, strconv.Itoa(n.ID))
		}
	} else {
		for _, n := range t.NodesOf(cpus) {
			ids = append(ids, strconv.Itoa(n))
		}
	}
	set, _ := topology.ParseCPUList(strings.Join(ids, ","))
	return set.String()
}

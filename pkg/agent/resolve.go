package agent

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpuset"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// Annotations the standalone agent reads on a workload, besides the memory
// QoS ones that pkg/memqos reads.
const (
	// AnnotationCPUSet opts a workload in to exclusive CPUs (value "true").
	AnnotationCPUSet = "cpuset-scheduler"
	// AnnotationCPUPolicy picks the allocation policy: static-burst, or one of
	// full-pcpus (the default), spread-by-pcpus, distribute-across-numa.
	AnnotationCPUPolicy = "cpu-policy"
	// AnnotationStopOnExit ("true") makes the agent stop the workload's
	// process and remove its cgroup when the agent itself stops.
	AnnotationStopOnExit = "locus.io/stop-on-agent-exit"
	// labelQOSClass is where pkg/memqos reads the QoS class.
	labelQOSClass = "koordinator.sh/qosClass"
)

// Source says where a workload's processes come from.
type Source string

const (
	FromCgroup  Source = "cgroup"
	FromCommand Source = "command"
	FromMatch   Source = "match"
)

// resolved is one configured workload with everything derived from its spec.
type resolved struct {
	spec     hostconfig.Workload
	source   Source
	cgroup   string
	class    string // upper-case QoS class, "" when none
	plan     workload.Workload
	problems []workload.Problem
}

func sourceOf(w hostconfig.Workload) Source {
	switch {
	case w.Cgroup != "":
		return FromCgroup
	case len(w.Command) > 0:
		return FromCommand
	}
	return FromMatch
}

// resolveWorkloads turns the config's workloads into the plan's view. It is
// pure; problems found here (a bad CPU limit, an unknown policy) leave the
// workload in the shared pool rather than dropping it.
func resolveWorkloads(cfg *hostconfig.HostConfig) []resolved {
	out := make([]resolved, 0, len(cfg.Workloads))
	for _, w := range cfg.Workloads {
		r := resolved{spec: w, source: sourceOf(w), cgroup: cfg.CgroupPath(w)}
		labels := map[string]string{}
		for k, v := range w.Labels {
			labels[k] = v
		}
		// The qosClass field is the standalone spelling of the class label.
		if w.QOSClass != "" {
			labels[labelQOSClass] = strings.ToUpper(w.QOSClass)
		}
		r.class = strings.ToUpper(labels[labelQOSClass])
		need, probs := cpuNeed(w)
		r.problems = probs
		r.plan = workload.Workload{
			Name:       w.Name,
			Cgroup:     r.cgroup,
			Containers: []workload.Container{{Name: w.Name, Cgroup: r.cgroup}},
			CPU:        need,
			BE:         r.class == "BE",
			// limits.memory caps the workload as a pod's limit caps its
			// container; the memory QoS below is reckoned from it too.
			OwnsMemoryLimit: true,
			MemoryLimit:     memContainer(w).LimitBytes,
			MemQoS: memqos.Workload{Labels: labels, Annotations: w.Annotations,
				KubeQoS: kubeQoS(w.Resources), Containers: []memqos.Container{memContainer(w)}},
		}
		out = append(out, r)
	}
	return out
}

// cpuNeed reads the CPU binding opt-in: cpuset-scheduler "true" with an
// integer limits.cpu binds the workload to that many CPUs.
func cpuNeed(w hostconfig.Workload) (workload.CPUNeed, []workload.Problem) {
	if !strings.EqualFold(w.Annotations[AnnotationCPUSet], "true") {
		return workload.CPUNeed{}, nil
	}
	lim := w.Resources.Limits.CPU
	if lim == nil || lim.MilliValue()%1000 != 0 || lim.MilliValue() < 1000 {
		got := "none"
		if lim != nil {
			got = lim.String()
		}
		return workload.CPUNeed{}, []workload.Problem{{Workload: w.Name, Reason: "InvalidCPULimit",
			Message: fmt.Sprintf("%s needs an integer resources.limits.cpu of at least 1, got %s; running in the shared pool", AnnotationCPUSet, got)}}
	}
	need := workload.CPUNeed{Exclusive: true, CPUs: int(lim.MilliValue() / 1000)}
	var probs []workload.Problem
	switch p := cpualloc.Policy(strings.ToLower(w.Annotations[AnnotationCPUPolicy])); p {
	case "":
	case cpualloc.StaticBurst:
		need.Policy = p
		// Only static-burst accounts for the request; for the others it
		// would re-allocate on a change that does not matter to them.
		if r := w.Resources.Requests.CPU; r != nil {
			need.RequestMilli = r.MilliValue()
		}
	case cpualloc.FullPCPUs, cpualloc.FullPCPUsThenThreads, cpualloc.SpreadByPCPUs, cpualloc.DistributeAcrossNUMA:
		need.Policy = p
	default:
		probs = append(probs, workload.Problem{Workload: w.Name, Reason: "InvalidCPUPolicy",
			Message: fmt.Sprintf("annotation %s: %q is not one of static-burst, full-pcpus, spread-by-pcpus, distribute-across-numa; using full-pcpus", AnnotationCPUPolicy, w.Annotations[AnnotationCPUPolicy])})
	}
	return need, probs
}

// memContainer applies Kubernetes defaulting: a limit without a request
// requests the limit.
func memContainer(w hostconfig.Workload) memqos.Container {
	c := memqos.Container{Name: w.Name}
	if q := w.Resources.Limits.Memory; q != nil {
		c.LimitBytes = q.Value()
	}
	c.RequestBytes = c.LimitBytes
	if q := w.Resources.Requests.Memory; q != nil {
		c.RequestBytes = q.Value()
	}
	return c
}

// kubeQoS classifies resources the way Kubernetes classifies a one-container
// pod: nothing set is BestEffort; CPU and memory limits with requests equal
// to them (or unset, defaulting to them) is Guaranteed; else Burstable.
func kubeQoS(r hostconfig.Resources) memqos.KubeQoS {
	set := func(q *resource.Quantity) bool { return q != nil && !q.IsZero() }
	if !set(r.Requests.CPU) && !set(r.Requests.Memory) && !set(r.Limits.CPU) && !set(r.Limits.Memory) {
		return memqos.BestEffort
	}
	same := func(req, lim *resource.Quantity) bool {
		return set(lim) && (req == nil || req.Cmp(*lim) == 0)
	}
	if same(r.Requests.CPU, r.Limits.CPU) && same(r.Requests.Memory, r.Limits.Memory) {
		return memqos.Guaranteed
	}
	return memqos.Burstable
}

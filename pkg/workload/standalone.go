package workload

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/memqos"
)

// Standalone is a HostConfig workload read into the agent's view.
type Standalone struct {
	Plan Workload
	// Class is the class label in upper case, "" when none: a standalone
	// workload's class is what its config says, never derived.
	Class    string
	Problems []Problem
}

// FromHostConfig reads one HostConfig workload whose cgroup is cgroup.
// Problems found here (a bad CPU limit, an unknown policy) leave the
// workload in the shared pool, or with the default policy, rather than
// dropping it.
func FromHostConfig(w hostconfig.Workload, cgroup string) Standalone {
	labels := map[string]string{}
	for k, v := range w.Labels {
		labels[k] = v
	}
	// The qosClass field is the standalone spelling of the class label.
	if w.QOSClass != "" {
		labels[LabelQoSClass] = strings.ToUpper(w.QOSClass)
	}
	kube := standaloneKubeQoS(w.Resources)
	qos := ClassifyQoS(labels, w.Annotations, kube)
	class := qos.Label
	need, probs := standaloneCPUNeed(w)
	if need.Exclusive {
		m, err := StandaloneMemory(w)
		if err != nil {
			need = CPUNeed{}
			probs = append(probs, Problem{Workload: w.Name, Reason: ReasonInvalidMemoryRequest, Message: err.Error() + "; running in the shared pool"})
		}
		need.Memory = m
	}
	devices, err := ParseDevices("devices", w.Devices)
	if err != nil {
		shared := ""
		if need.Exclusive {
			need, shared = CPUNeed{}, "; running in the shared pool"
		}
		probs = append(probs, Problem{Workload: w.Name, Reason: ReasonInvalidDevices, Message: err.Error() + shared})
	}
	mem := memContainer(w.Name, quantityValue(w.Resources.Requests.Memory), quantityValue(w.Resources.Limits.Memory))
	s := Standalone{Class: class, Problems: probs, Plan: Workload{
		Name:       w.Name,
		Cgroup:     cgroup,
		Containers: []Container{{Name: w.Name, Cgroup: cgroup}},
		CPU:        need,
		BE:         class == string(memqos.ClassBE),
		// limits.memory caps the workload as a pod's limit caps its
		// container; the memory QoS is reckoned from it too.
		OwnsMemoryLimit: true,
		MemoryLimit:     mem.LimitBytes,
		QoS:             qos,
		Devices:         devices,
		dedicated:       w.Dedicated() && need.Exclusive,
	}}
	s.Plan.SetMemQoS(MemQoSOf("", labels, w.Annotations, kube, []memqos.Container{mem}))
	s.Plan.SetMemoryLocality(w.Annotations)
	s.Plan.SetCPUQoS(qos, labels, w.Annotations)
	s.Plan.SetCPUBurst(burstAnnotations(w))
	if w.Movable != nil {
		// The movable field is the standalone spelling of the annotation,
		// checked as the HostConfig was parsed; it wins over the annotation.
		s.Plan.Movable = bool(*w.Movable)
	} else if err := s.Plan.SetMovable(w.Annotations); err != nil {
		s.Problems = append(s.Problems, Problem{Workload: w.Name, Reason: ReasonInvalidMovable, Message: err.Error() + "; it is not moved"})
	}
	if lim := w.Resources.Limits.CPU; lim != nil && lim.MilliValue() > 0 && lim.MilliValue() <= maxCPULimitMilli {
		s.Plan.Containers[0].CPULimitMilli = lim.MilliValue()
	}
	return s
}

// StandaloneMemory is what a HostConfig workload asks of its NUMA nodes'
// memory: requests (else limits) memory, hugepages-2Mi and hugepages-1Gi.
func StandaloneMemory(w hostconfig.Workload) (cpualloc.Memory, error) {
	of := func(rl hostconfig.ResourceList) MemoryQuantities {
		return MemoryQuantities{Memory: rl.Memory, HugePages2Mi: rl.HugePages2Mi, HugePages1Gi: rl.HugePages1Gi}
	}
	return MemoryOf("", of(w.Resources.Requests), of(w.Resources.Limits))
}

// standaloneCPUNeed reads the CPU binding opt-in: cpuset-scheduler "true"
// with an integer limits.cpu binds the workload to that many CPUs. No
// cpu-policy leaves the policy unnamed: the allocator applies DefaultPolicy,
// and the checkpoints of running workloads keep matching.
func standaloneCPUNeed(w hostconfig.Workload) (CPUNeed, []Problem) {
	if !IsTrue(w.Annotations[AnnotationCPUSet]) {
		return CPUNeed{}, nil
	}
	lim := w.Resources.Limits.CPU
	if lim == nil || lim.MilliValue()%1000 != 0 || lim.MilliValue() < 1000 {
		got := "none"
		if lim != nil {
			got = lim.String()
		}
		return CPUNeed{}, []Problem{{Workload: w.Name, Reason: "InvalidCPULimit",
			Message: fmt.Sprintf("%s needs an integer resources.limits.cpu of at least 1, got %s; running in the shared pool", AnnotationCPUSet, got)}}
	}
	need := CPUNeed{Exclusive: true, CPUs: int(lim.MilliValue() / 1000)}
	p, err := PolicyOf(w.Annotations)
	if err != nil {
		return need, []Problem{{Workload: w.Name, Reason: "InvalidCPUPolicy",
			Message: fmt.Sprintf("%v; using %s", err, DefaultPolicy)}}
	}
	need.Policy = p
	// Only static-burst accounts for the request; for the others it would
	// re-allocate on a change that does not matter to them.
	if r := w.Resources.Requests.CPU; p == cpualloc.StaticBurst && r != nil {
		need.RequestMilli = r.MilliValue()
	}
	return need, nil
}

// standaloneKubeQoS classifies a standalone workload as Kubernetes would a
// one-container pod with its resources.
func standaloneKubeQoS(r hostconfig.Resources) memqos.KubeQoS {
	return deriveQoS([]resources{{req: [2]*resource.Quantity{r.Requests.CPU, r.Requests.Memory},
		lim: [2]*resource.Quantity{r.Limits.CPU, r.Limits.Memory}}})
}

func quantityValue(q *resource.Quantity) *int64 {
	if q == nil {
		return nil
	}
	v := q.Value()
	return &v
}

// burstAnnotations are a standalone workload's annotations with its
// cpuBurst field, which wins, as the koordinator.sh/cpuBurst annotation.
func burstAnnotations(w hostconfig.Workload) map[string]string {
	if len(w.CPUBurst) == 0 || string(w.CPUBurst) == "null" {
		return w.Annotations
	}
	a := map[string]string{AnnotationCPUBurst: string(w.CPUBurst)}
	for k, v := range w.Annotations {
		if k != AnnotationCPUBurst {
			a[k] = v
		}
	}
	return a
}

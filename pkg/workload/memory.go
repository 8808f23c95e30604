package workload

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// MaxMemoryBytes bounds every memory quantity read from outside text, and
// their sum for a workload: 1 PiB, beyond any machine's memory, and far
// enough below 2^64 that sums of a node's holdings cannot overflow.
const MaxMemoryBytes = 1 << 50

// The huge page resources a workload may ask for, as Kubernetes names them.
const (
	ResourceHugePages2Mi = corev1.ResourceName("hugepages-2Mi")
	ResourceHugePages1Gi = corev1.ResourceName("hugepages-1Gi")
)

// ReasonInvalidMemoryRequest is the problem of a pinned workload whose
// memory or huge page request cannot be read: it runs in the shared pool.
const ReasonInvalidMemoryRequest = "InvalidMemoryRequest"

// MemoryQuantities are one container's memory and huge page quantities, as
// its requests or its limits give them (nil when not given).
type MemoryQuantities struct {
	Memory, HugePages2Mi, HugePages1Gi *resource.Quantity
}

// MemoryOf reads what one container (or a standalone workload, or a flag)
// asks of its nodes' memory: each kind's request, else its limit, as
// Kubernetes defaults a request. field, when not empty, names where the
// quantities are written ("spec.containers[0] (app): "), for the error.
func MemoryOf(field string, req, lim MemoryQuantities) (cpualloc.Memory, error) {
	var m cpualloc.Memory
	for _, k := range []struct {
		name     string
		req, lim *resource.Quantity
		pageKiB  uint64
		out      *uint64
	}{
		{"memory", req.Memory, lim.Memory, 0, &m.Bytes},
		{string(ResourceHugePages2Mi), req.HugePages2Mi, lim.HugePages2Mi, topology.HugePages2MiKiB, &m.HugePages2Mi},
		{string(ResourceHugePages1Gi), req.HugePages1Gi, lim.HugePages1Gi, topology.HugePages1GiKiB, &m.HugePages1Gi},
	} {
		q, which := k.req, "requests"
		if q == nil {
			q, which = k.lim, "limits"
		}
		if q == nil {
			continue
		}
		v, err := memoryBytes(q, k.pageKiB)
		if err != nil {
			return cpualloc.Memory{}, fmt.Errorf("%sresources.%s.%s: %s %v", field, which, k.name, q.String(), err)
		}
		*k.out = v
	}
	return m, nil
}

// memoryBytes is a quantity in bytes, bounded, and for huge pages a whole
// number of pages.
func memoryBytes(q *resource.Quantity, pageKiB uint64) (uint64, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("is negative")
	}
	if q.CmpInt64(MaxMemoryBytes) > 0 {
		return 0, fmt.Errorf("is more than %d bytes (1Pi)", MaxMemoryBytes)
	}
	v := uint64(q.Value())
	if pageKiB > 0 && v%(pageKiB*1024) != 0 {
		return 0, fmt.Errorf("is not a multiple of the page size (%d KiB)", pageKiB)
	}
	return v, nil
}

// addMemory sums two needs, the sum bounded by MaxMemoryBytes in each kind.
func addMemory(a, b cpualloc.Memory) (cpualloc.Memory, error) {
	s := cpualloc.Memory{Bytes: a.Bytes + b.Bytes, HugePages2Mi: a.HugePages2Mi + b.HugePages2Mi, HugePages1Gi: a.HugePages1Gi + b.HugePages1Gi}
	if s.Bytes > MaxMemoryBytes || s.HugePages2Mi > MaxMemoryBytes || s.HugePages1Gi > MaxMemoryBytes {
		return cpualloc.Memory{}, fmt.Errorf("the containers' memory adds up to more than %d bytes (1Pi)", MaxMemoryBytes)
	}
	return s, nil
}

func maxMemory(a, b cpualloc.Memory) cpualloc.Memory {
	return cpualloc.Memory{Bytes: max(a.Bytes, b.Bytes), HugePages2Mi: max(a.HugePages2Mi, b.HugePages2Mi), HugePages1Gi: max(a.HugePages1Gi, b.HugePages1Gi)}
}

// PodMemory is what a pod asks of its NUMA nodes' memory, counted as
// Kubernetes counts a pod's requests: its app containers and sidecars
// together, or an init container with the sidecars started before it,
// whichever is more. A huge page size other than 2Mi and 1Gi, a negative or
// absurd quantity, or huge pages that are not whole pages, is an error
// naming the container, the field and the value.
func PodMemory(pod *corev1.Pod) (cpualloc.Memory, error) {
	var sidecars, initMax, apps cpualloc.Memory
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		m, err := containerMemory(fmt.Sprintf("spec.initContainers[%d] (%s): ", i, c.Name), c.Resources)
		if err != nil {
			return cpualloc.Memory{}, err
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			if sidecars, err = addMemory(sidecars, m); err != nil {
				return cpualloc.Memory{}, err
			}
			initMax = maxMemory(initMax, sidecars)
			continue
		}
		with, err := addMemory(sidecars, m)
		if err != nil {
			return cpualloc.Memory{}, err
		}
		initMax = maxMemory(initMax, with)
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		m, err := containerMemory(fmt.Sprintf("spec.containers[%d] (%s): ", i, c.Name), c.Resources)
		if err != nil {
			return cpualloc.Memory{}, err
		}
		if apps, err = addMemory(apps, m); err != nil {
			return cpualloc.Memory{}, err
		}
	}
	total, err := addMemory(apps, sidecars)
	if err != nil {
		return cpualloc.Memory{}, err
	}
	return maxMemory(total, initMax), nil
}

// containerMemory reads one container's memory and huge page quantities.
func containerMemory(field string, r corev1.ResourceRequirements) (cpualloc.Memory, error) {
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for name, q := range list.rl {
			if strings.HasPrefix(string(name), "hugepages-") && name != ResourceHugePages2Mi && name != ResourceHugePages1Gi {
				return cpualloc.Memory{}, fmt.Errorf("%sresources.%s.%s: %s: huge pages of that size are not accounted; want %s or %s",
					field, list.name, topology.Quote(string(name)), q.String(), ResourceHugePages2Mi, ResourceHugePages1Gi)
			}
		}
	}
	of := func(rl corev1.ResourceList) MemoryQuantities {
		var m MemoryQuantities
		for name, out := range map[corev1.ResourceName]**resource.Quantity{
			corev1.ResourceMemory: &m.Memory, ResourceHugePages2Mi: &m.HugePages2Mi, ResourceHugePages1Gi: &m.HugePages1Gi} {
			if q, ok := rl[name]; ok {
				*out = &q
			}
		}
		return m
	}
	return MemoryOf(field, of(r.Requests), of(r.Limits))
}

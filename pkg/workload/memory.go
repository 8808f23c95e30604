package workload

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/quantity"
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
	if !quantity.Bounded(q) {
		return 0, fmt.Errorf("is out of range")
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

// addMemory sums two needs, the sum bounded by MaxMemoryBytes in each kind;
// the error names the field the sum is of, as every other error here does.
func addMemory(a, b cpualloc.Memory) (cpualloc.Memory, error) {
	s := cpualloc.Memory{Bytes: a.Bytes + b.Bytes, HugePages2Mi: a.HugePages2Mi + b.HugePages2Mi, HugePages1Gi: a.HugePages1Gi + b.HugePages1Gi}
	for i, v := range [...]uint64{s.Bytes, s.HugePages2Mi, s.HugePages1Gi} {
		if v > MaxMemoryBytes {
			return cpualloc.Memory{}, fmt.Errorf("spec.containers[*].resources.%s: the containers' requests add up to more than %d bytes (1Pi)",
				podMemoryKinds[i].name, MaxMemoryBytes)
		}
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
// naming the container, the field and the value. It allocates nothing
// unless it fails: the scheduler reads every pod through it.
func PodMemory(pod *corev1.Pod) (cpualloc.Memory, error) {
	var sidecars, initMax, apps cpualloc.Memory
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		m, err := containerMemory("initContainers", i, c)
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
		m, err := containerMemory("containers", i, &pod.Spec.Containers[i])
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

// podMemoryKinds are the resources PodMemory reads, with their page sizes
// (0: ordinary memory).
var podMemoryKinds = [...]struct {
	name    corev1.ResourceName
	pageKiB uint64
}{{corev1.ResourceMemory, 0}, {ResourceHugePages2Mi, topology.HugePages2MiKiB}, {ResourceHugePages1Gi, topology.HugePages1GiKiB}}

// containerMemory reads one container's memory and huge page quantities,
// each its request, else its limit; list ("containers") and i name it in an
// error, formatted only then.
func containerMemory(list string, i int, c *corev1.Container) (cpualloc.Memory, error) {
	field := func() string { return fmt.Sprintf("spec.%s[%d] (%s): ", list, i, c.Name) }
	for _, rl := range [2]struct {
		name string
		rl   corev1.ResourceList
	}{{"requests", c.Resources.Requests}, {"limits", c.Resources.Limits}} {
		for name, q := range rl.rl {
			if strings.HasPrefix(string(name), "hugepages-") && name != ResourceHugePages2Mi && name != ResourceHugePages1Gi {
				return cpualloc.Memory{}, fmt.Errorf("%sresources.%s.%s: %s: huge pages of that size are not accounted; want %s or %s",
					field(), rl.name, topology.Quote(string(name)), q.String(), ResourceHugePages2Mi, ResourceHugePages1Gi)
			}
		}
	}
	var out [len(podMemoryKinds)]uint64
	for k, kind := range podMemoryKinds {
		q, ok := c.Resources.Requests[kind.name]
		which := "requests"
		if !ok {
			q, ok = c.Resources.Limits[kind.name]
			which = "limits"
		}
		if !ok {
			continue
		}
		v, err := memoryBytes(&q, kind.pageKiB)
		if err != nil {
			return cpualloc.Memory{}, fmt.Errorf("%sresources.%s.%s: %s %v", field(), which, kind.name, q.String(), err)
		}
		out[k] = v
	}
	return cpualloc.Memory{Bytes: out[0], HugePages2Mi: out[1], HugePages1Gi: out[2]}, nil
}

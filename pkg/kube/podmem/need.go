// Package podmem reads what a pod needs of memory and huge pages on the
// NUMA nodes of its cpuset.mems, from its resources as the API server
// holds them (client-go types, no annotation text): the memory request
// (the limit when there is none), and the hugepages-2Mi and hugepages-1Gi
// requests. Pure; the scheduler plugin and the node agent's report read
// pods through it, so both count a pod's memory the same way.
package podmem

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// The huge page resources a pod can ask for and their page sizes.
const (
	HugePages2Mi corev1.ResourceName = "hugepages-2Mi"
	HugePages1Gi corev1.ResourceName = "hugepages-1Gi"
)

// MaxBytes bounds one resource of one container and of the whole pod: a
// petabyte is more memory than any machine a pod runs on has, and keeps
// every sum of a pod's containers far from overflowing.
const MaxBytes = 1 << 50

// Need is the pod's memory need as Kubernetes counts a pod's effective
// request (k8s.io/component-helpers/resource, the sidecar KEP's rule): per
// kind, the larger of the app containers and sidecars together, and of
// each init container with the sidecars declared before it. An error names
// the container, the resource and the value: a negative or absurd
// quantity, huge pages that are not whole pages, or a huge page size
// other than 2Mi and 1Gi (the only ones the agent accounts per node).
func Need(pod *corev1.Pod) (cpualloc.Memory, error) {
	var sidecars, initMax, apps [3]uint64
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		n, err := containerNeed(c)
		if err != nil {
			return cpualloc.Memory{}, fmt.Errorf("spec.initContainers[%d] (%s): %w", i, c.Name, err)
		}
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		for k := range n {
			if sidecar {
				sidecars[k] += n[k]
				initMax[k] = max(initMax[k], sidecars[k])
			} else {
				initMax[k] = max(initMax[k], n[k]+sidecars[k])
			}
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		n, err := containerNeed(c)
		if err != nil {
			return cpualloc.Memory{}, fmt.Errorf("spec.containers[%d] (%s): %w", i, c.Name, err)
		}
		for k := range n {
			apps[k] += n[k]
		}
	}
	var total [3]uint64
	for k := range total {
		total[k] = max(apps[k]+sidecars[k], initMax[k])
		if total[k] > MaxBytes {
			return cpualloc.Memory{}, fmt.Errorf("the pod's containers ask for %d bytes of %s in all, more than %d", total[k], kinds[k].name, uint64(MaxBytes))
		}
	}
	return cpualloc.Memory{Bytes: total[0], HugePages2Mi: total[1], HugePages1Gi: total[2]}, nil
}

// kinds are the resources counted, in the order of Need's arrays; a page
// size of 0 is ordinary memory.
var kinds = [3]struct {
	name    corev1.ResourceName
	pageKiB uint64
}{{corev1.ResourceMemory, 0}, {HugePages2Mi, topology.HugePages2MiKiB}, {HugePages1Gi, topology.HugePages1GiKiB}}

// containerNeed is one container's request of each kind (the limit where it
// has no request: the API server copies a lone limit into the request, a
// pod read before that did not).
func containerNeed(c *corev1.Container) ([3]uint64, error) {
	var out [3]uint64
	for _, list := range [2]corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
		for name := range list {
			if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) && name != HugePages2Mi && name != HugePages1Gi {
				return out, fmt.Errorf("resources %s: only %s and %s are placed on NUMA nodes", name, HugePages2Mi, HugePages1Gi)
			}
		}
	}
	for k, kind := range kinds {
		q, ok := c.Resources.Requests[kind.name]
		where := "requests"
		if !ok {
			q, ok = c.Resources.Limits[kind.name]
			where = "limits"
		}
		if !ok {
			continue
		}
		n, err := bytesOf(q)
		if err != nil {
			return out, fmt.Errorf("resources.%s.%s: %v", where, kind.name, err)
		}
		if page := kind.pageKiB * 1024; page > 0 && n%page != 0 {
			return out, fmt.Errorf("resources.%s.%s: %s is not a whole number of %d-byte pages", where, kind.name, q.String(), page)
		}
		out[k] = n
	}
	return out, nil
}

// bytesOf is a quantity as bytes, refused when negative, fractional or
// above MaxBytes.
func bytesOf(q resource.Quantity) (uint64, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%s is negative", q.String())
	}
	if q.Cmp(*resource.NewQuantity(MaxBytes, resource.BinarySI)) > 0 {
		return 0, fmt.Errorf("%s is more than %d bytes", q.String(), uint64(MaxBytes))
	}
	n, ok := q.AsInt64()
	if !ok {
		// Within the bound but not a whole number of bytes (1.5 bytes,
		// say): what the kubelet rounds up.
		n = q.Value()
	}
	return uint64(n), nil
}

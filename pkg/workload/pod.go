package workload

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/quantity"
)

// PodQoS classifies a pod: its class label, else its Kubernetes QoS class.
func PodQoS(pod *corev1.Pod) QoS {
	return ClassifyQoS(pod.Labels, pod.Annotations, memqos.KubeQoS(KubeQoS(pod)))
}

// PodMemQoS is what memory QoS reads of a pod: its namespace, its class
// and memoryQOS annotation (MemQoSOf), and each container's memory request
// and limit, with Kubernetes defaulting (a limit alone requests the limit).
// The containers are there even when the error says the text is bad.
func PodMemQoS(pod *corev1.Pod) (memqos.Workload, error) {
	var cs []memqos.Container
	for _, c := range pod.Spec.Containers {
		var req, lim *int64
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && quantity.Bounded(&q) {
			v := q.Value()
			lim = &v
		}
		if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok && quantity.Bounded(&q) {
			v := q.Value()
			req = &v
		}
		cs = append(cs, memContainer(c.Name, req, lim))
	}
	return MemQoSOf(pod.Namespace, pod.Labels, pod.Annotations, memqos.KubeQoS(KubeQoS(pod)), cs)
}

// memContainer applies Kubernetes defaulting: a limit without a request
// requests the limit; neither is 0 bytes both.
func memContainer(name string, req, lim *int64) memqos.Container {
	c := memqos.Container{Name: name}
	if lim != nil {
		c.LimitBytes = *lim
	}
	c.RequestBytes = c.LimitBytes
	if req != nil {
		c.RequestBytes = *req
	}
	return c
}

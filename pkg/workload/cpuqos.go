package workload

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/topology"
)

// CPUQoS reads what CPU QoS needs of a workload: its class (the label, else
// BE for Kubernetes BestEffort and LS for the rest, as the protocol maps
// them) and the core isolation annotation. A class label that is not a
// class, or an annotation that is not true or false, is an error naming it.
func CPUQoS(q QoS, labels, annotations map[string]string) (cpuqos.Workload, error) {
	class, _ := q.Locality()
	switch class {
	case cpuqos.ClassLSE, cpuqos.ClassLSR, cpuqos.ClassLS, cpuqos.ClassBE, cpuqos.ClassSystem:
	default:
		raw, where := ClassLabel(labels, annotations)
		return cpuqos.Workload{}, fmt.Errorf("%s: %s is not one of LSE, LSR, LS, BE, SYSTEM", where, topology.Quote(raw))
	}
	w := cpuqos.Workload{Class: class}
	raw, ok := annotations[AnnotationCoreIsolation]
	if !ok {
		return w, nil
	}
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true":
		w.CoreIsolation = new(true)
	case "false":
		w.CoreIsolation = new(false)
	default:
		return cpuqos.Workload{}, fmt.Errorf("annotation %s: %s is not true or false", AnnotationCoreIsolation, topology.Quote(raw))
	}
	return w, nil
}

// SetCPUQoS fills the workload's CPU QoS from its class and annotations.
func (w *Workload) SetCPUQoS(q QoS, labels, annotations map[string]string) {
	c, err := CPUQoS(q, labels, annotations)
	w.CPUQoS, w.CPUQoSInvalid = c, ""
	if err != nil {
		w.CPUQoSInvalid = err.Error()
	}
}

// maxCPULimitMilli bounds the limits CPU Burst reckons with (100,000 CPUs),
// so that its arithmetic cannot overflow on a hostile quantity.
const maxCPULimitMilli = 100_000_000

// PodCPULimits are the CPU limits of a pod's containers, init containers
// and sidecars included (the kubelet gives each its quota), in millicores,
// by name; a container without one, or with one out of bounds, is absent.
func PodCPULimits(pod *corev1.Pod) map[string]int64 {
	out := map[string]int64{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && quantity.Bounded(&q) {
			if m := q.MilliValue(); m > 0 && m <= maxCPULimitMilli {
				out[c.Name] = m
			}
		}
	}
	return out
}

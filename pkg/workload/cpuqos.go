package workload

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
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
		raw, where := memqos.ClassLabel(labels, annotations)
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

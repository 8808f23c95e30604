package workload

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// MemQoSOf reads what memory QoS needs of a workload's text: its class (the
// class label, else its Kubernetes QoS class) and its memoryQOS annotation
// (the koordinator.sh key, else the legacy one). The error names the label
// or annotation and the value; the workload returned keeps its namespace
// and containers.
func MemQoSOf(namespace string, labels, annotations map[string]string, kube memqos.KubeQoS, cs []memqos.Container) (memqos.Workload, error) {
	w := memqos.Workload{Namespace: namespace, Containers: cs}
	ps, key, err := memQoSAnnotation(annotations)
	if err != nil {
		return w, err
	}
	class, from, guaranteed, err := memQoSClass(labels, annotations, kube)
	if err != nil {
		return w, err
	}
	w.Pod, w.PodKey, w.Class, w.ClassFrom, w.Guaranteed = ps, key, class, from, guaranteed
	return w, nil
}

// SetMemQoS fills the workload's memory QoS from what MemQoSOf read.
func (w *Workload) SetMemQoS(mem memqos.Workload, err error) {
	w.MemQoS, w.MemQoSInvalid = mem, ""
	if err != nil {
		w.MemQoSInvalid = err.Error()
	}
}

// memQoSAnnotation reads the memoryQOS annotation and says which key it came
// from ("" when there is none). When both generations are present the
// koordinator.sh key wins, whatever the legacy one says.
func memQoSAnnotation(annotations map[string]string) (memqos.PodSetting, string, error) {
	for _, key := range []string{AnnotationMemoryQoS, LegacyAnnotationMemoryQoS} {
		raw, ok := annotations[key]
		if !ok {
			continue
		}
		ps, err := sloconfig.ParseMemoryQOSAnnotation(raw)
		if err != nil {
			return memqos.PodSetting{}, key, fmt.Errorf("annotation %s: %w", key, err)
		}
		return ps, key, nil
	}
	return memqos.PodSetting{Policy: memqos.PolicyDefault}, "", nil
}

// memQoSClass resolves the class memory QoS reckons with: the class label,
// else the Kubernetes QoS class. It says where the class came from, and
// whether it was mapped from Guaranteed (which has its own built-in
// setting).
func memQoSClass(labels, annotations map[string]string, kube memqos.KubeQoS) (c memqos.Class, from string, guaranteed bool, err error) {
	if raw, where := ClassLabel(labels, annotations); where != "" {
		switch v := memqos.Class(strings.ToUpper(strings.TrimSpace(raw))); v {
		case memqos.ClassLSE, memqos.ClassLSR, memqos.ClassLS, memqos.ClassBE, memqos.ClassSystem:
			return v, where, false, nil
		}
		return "", "", false, fmt.Errorf("%s: %q is not one of LSE, LSR, LS, BE, SYSTEM", where, clip(raw))
	}
	from = "Kubernetes QoS " + string(kube)
	switch {
	case strings.EqualFold(string(kube), string(memqos.Guaranteed)):
		return memqos.ClassLS, from, true, nil
	case strings.EqualFold(string(kube), string(memqos.Burstable)):
		return memqos.ClassLS, from, false, nil
	case strings.EqualFold(string(kube), string(memqos.BestEffort)):
		return memqos.ClassBE, from, false, nil
	case kube == "":
		return "", "", false, fmt.Errorf("no QoS class: set label %s or the Kubernetes QoS class", LabelQoSClass)
	}
	return "", "", false, fmt.Errorf("the Kubernetes QoS class %q is not one of Guaranteed, Burstable, BestEffort", clip(string(kube)))
}

// clip cuts a value from a pod to 40 bytes for an error message, which
// ends up in logs and Events.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// MemoryLocalityOf reads a workload's own memoryLocality annotation, nil
// when it has none; the error names the annotation and the field.
func MemoryLocalityOf(annotations map[string]string) (*sloconfig.Locality, error) {
	raw, ok := annotations[AnnotationMemoryLocality]
	if !ok {
		return nil, nil
	}
	s, err := sloconfig.ParseLocalityAnnotation(raw, AnnotationMemoryLocality)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// SetMemoryLocality fills the workload's memory locality annotation.
func (w *Workload) SetMemoryLocality(annotations map[string]string) {
	s, err := MemoryLocalityOf(annotations)
	w.MemoryLocality, w.MemoryLocalityInvalid = s, ""
	if err != nil {
		w.MemoryLocalityInvalid = err.Error()
	}
}

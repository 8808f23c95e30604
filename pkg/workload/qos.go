package workload

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/quantity"
)

// QoS is a workload's QoS class as its text gives it: the class label, if
// any, and the Kubernetes QoS class. Every side of Locus that needs a class
// reads it from here, so a label means the same to the CPU pools, status,
// memory QoS (MemQoSOf, which validates it) and the locality runner.
type QoS struct {
	// Label is the class label in upper case (koordinator.sh/qosClass, then
	// the legacy alibabacloud.com/qosClass label, then that legacy key as an
	// annotation, as older agents wrote it); "" when none is set.
	Label string
	Kube  memqos.KubeQoS
}

// ClassifyQoS reads the class label from labels and annotations.
func ClassifyQoS(labels, annotations map[string]string, kube memqos.KubeQoS) QoS {
	raw, _ := ClassLabel(labels, annotations)
	return QoS{Label: strings.ToUpper(strings.TrimSpace(raw)), Kube: kube}
}

// ClassLabel finds the class label as written and where it was found (""
// when none is set, blanks not counting): the koordinator.sh label, then
// the legacy label, then the legacy key as an annotation, as older agents
// wrote it.
func ClassLabel(labels, annotations map[string]string) (raw, where string) {
	for _, s := range []struct{ where, value string }{
		{"label " + LabelQoSClass, labels[LabelQoSClass]},
		{"label " + LegacyQoSClass, labels[LegacyQoSClass]},
		{"annotation " + LegacyQoSClass, annotations[LegacyQoSClass]},
	} {
		if strings.TrimSpace(s.value) != "" {
			return s.value, s.where
		}
	}
	return "", ""
}

// Status is the class a pod shows: its label, else its Kubernetes class.
func (q QoS) Status() string {
	if q.Label != "" {
		return q.Label
	}
	return string(q.Kube)
}

// BE says whether a pod runs in the BE pool when it holds no CPUs: labelled
// BE, or unlabelled BestEffort.
func (q QoS) BE() bool {
	s := q.Status()
	return s == string(memqos.ClassBE) || s == string(memqos.BestEffort)
}

// Locality is the class as memory QoS reckons it (the label, else BE for
// BestEffort and LS for the rest); unlabelledGuaranteed marks a Guaranteed
// workload without a label, which only lsrClass governs.
func (q QoS) Locality() (class string, unlabelledGuaranteed bool) {
	if q.Label != "" {
		return q.Label, false
	}
	switch {
	case strings.EqualFold(string(q.Kube), string(memqos.BestEffort)):
		return string(memqos.ClassBE), false
	case strings.EqualFold(string(q.Kube), string(memqos.Guaranteed)):
		return string(memqos.ClassLS), true
	}
	return string(memqos.ClassLS), false
}

// KubeQoS is the pod's Kubernetes QoS class: status.qosClass, which the
// apiserver sets at creation, or else derived from the containers the way
// Kubernetes derives it.
func KubeQoS(pod *corev1.Pod) corev1.PodQOSClass {
	if q := pod.Status.QOSClass; q != "" {
		return q
	}
	var rs []resources
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			var r resources
			for i, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := c.Resources.Requests[name]; ok {
					r.req[i] = &q
				}
				if q, ok := c.Resources.Limits[name]; ok {
					r.lim[i] = &q
				}
			}
			rs = append(rs, r)
		}
	}
	return corev1.PodQOSClass(deriveQoS(rs))
}

// resources are one container's CPU and memory requests and limits, nil
// where not given.
type resources struct{ req, lim [2]*resource.Quantity }

// deriveQoS classifies as Kubernetes does: no CPU or memory request or
// limit anywhere is BestEffort; CPU and memory limits on every container,
// each request equal to its limit or unset (defaulting to it), is
// Guaranteed; anything else Burstable.
func deriveQoS(cs []resources) memqos.KubeQoS {
	// A quantity out of quantity.Bounded is read as not set: comparing it
	// exactly would not end.
	set := func(q *resource.Quantity) bool { return q != nil && quantity.Bounded(q) && !q.IsZero() }
	anySet, guaranteed := false, true
	for _, c := range cs {
		for i := range c.req {
			if set(c.req[i]) || set(c.lim[i]) {
				anySet = true
			}
			if !set(c.lim[i]) || (c.req[i] != nil && (!quantity.Bounded(c.req[i]) || c.req[i].Cmp(*c.lim[i]) != 0)) {
				guaranteed = false
			}
		}
	}
	switch {
	case !anySet:
		return memqos.BestEffort
	case guaranteed:
		return memqos.Guaranteed
	}
	return memqos.Burstable
}

package workload

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// TestMemQoSClass: the class memory QoS reckons with, and where it came
// from, as the text gives it.
func TestMemQoSClass(t *testing.T) {
	lbl := func(k, v string) map[string]string { return map[string]string{k: v} }
	cases := []struct {
		name        string
		labels, ann map[string]string
		kube        memqos.KubeQoS
		class       memqos.Class
		from        string
		guaranteed  bool
	}{
		{"label LS", lbl(LabelQoSClass, "LS"), nil, memqos.BestEffort, memqos.ClassLS, "label koordinator.sh/qosClass", false},
		{"label is case-insensitive", lbl(LabelQoSClass, "be"), nil, "", memqos.ClassBE, "label koordinator.sh/qosClass", false},
		{"new label wins over legacy", map[string]string{LabelQoSClass: "LS", LegacyQoSClass: "BE"}, nil, "", memqos.ClassLS, "label koordinator.sh/qosClass", false},
		{"legacy label", lbl(LegacyQoSClass, "BE"), nil, memqos.Burstable, memqos.ClassBE, "label alibabacloud.com/qosClass", false},
		{"legacy annotation", nil, lbl(LegacyQoSClass, "LS"), memqos.BestEffort, memqos.ClassLS, "annotation alibabacloud.com/qosClass", false},
		{"empty label falls through", lbl(LabelQoSClass, ""), nil, memqos.Burstable, memqos.ClassLS, "Kubernetes QoS Burstable", false},
		{"Burstable is LS", nil, nil, "burstable", memqos.ClassLS, "Kubernetes QoS burstable", false},
		{"BestEffort is BE", nil, nil, memqos.BestEffort, memqos.ClassBE, "Kubernetes QoS BestEffort", false},
		{"Guaranteed is LS, marked", nil, nil, memqos.Guaranteed, memqos.ClassLS, "Kubernetes QoS Guaranteed", true},
		{"labelled Guaranteed is its label", lbl(LabelQoSClass, "LS"), nil, memqos.Guaranteed, memqos.ClassLS, "label koordinator.sh/qosClass", false},
		{"LSR", lbl(LabelQoSClass, "LSR"), nil, "", memqos.ClassLSR, "label koordinator.sh/qosClass", false},
		{"LSE", lbl(LabelQoSClass, "LSE"), nil, "", memqos.ClassLSE, "label koordinator.sh/qosClass", false},
		{"SYSTEM", lbl(LabelQoSClass, "system"), nil, "", memqos.ClassSystem, "label koordinator.sh/qosClass", false},
	}
	for _, tc := range cases {
		w, err := MemQoSOf("ns", tc.labels, tc.ann, tc.kube, nil)
		if err != nil || w.Class != tc.class || w.ClassFrom != tc.from || w.Guaranteed != tc.guaranteed || w.Namespace != "ns" {
			t.Errorf("%s: %+v, %v; want %s from %q guaranteed %v", tc.name, w, err, tc.class, tc.from, tc.guaranteed)
		}
	}
}

// TestMemQoSAnnotation: the koordinator.sh key wins over the legacy one,
// whatever the legacy one says; the key read is named.
func TestMemQoSAnnotation(t *testing.T) {
	cases := []struct {
		name   string
		ann    map[string]string
		policy memqos.Policy
		key    string
	}{
		{"none", nil, memqos.PolicyDefault, ""},
		{"legacy auto", map[string]string{LegacyAnnotationMemoryQoS: `{"policy":"auto"}`}, memqos.PolicyAuto, LegacyAnnotationMemoryQoS},
		{"legacy none", map[string]string{LegacyAnnotationMemoryQoS: `{"policy":"None"}`}, memqos.PolicyNone, LegacyAnnotationMemoryQoS},
		{"new none beats legacy auto", map[string]string{AnnotationMemoryQoS: `{"policy":"none"}`, LegacyAnnotationMemoryQoS: `{"policy":"auto"}`},
			memqos.PolicyNone, AnnotationMemoryQoS},
		{"new default beats legacy none", map[string]string{AnnotationMemoryQoS: `{"policy":"default"}`, LegacyAnnotationMemoryQoS: `{"policy":"none"}`},
			memqos.PolicyDefault, AnnotationMemoryQoS},
		{"new beats a bad legacy", map[string]string{AnnotationMemoryQoS: `{"policy":"auto"}`, LegacyAnnotationMemoryQoS: `{`},
			memqos.PolicyAuto, AnnotationMemoryQoS},
	}
	for _, tc := range cases {
		w, err := MemQoSOf("", nil, tc.ann, memqos.Burstable, nil)
		if err != nil || w.Pod.Policy != tc.policy || w.PodKey != tc.key {
			t.Errorf("%s: policy %q from %q, %v; want %q from %q", tc.name, w.Pod.Policy, w.PodKey, err, tc.policy, tc.key)
		}
	}
	w, err := MemQoSOf("", nil, map[string]string{AnnotationMemoryQoS: `{"policy": "auto", "lowLimitPercent": 60}`}, memqos.Burstable, nil)
	if err != nil || w.Pod.Params.LowLimitPercent == nil || *w.Pod.Params.LowLimitPercent != 60 {
		t.Errorf("parameters: %+v, %v", w.Pod, err)
	}
}

// Every error names the label or annotation and the value.
func TestMemQoSErrors(t *testing.T) {
	cs := []memqos.Container{{Name: "a", RequestBytes: 1}}
	cases := []struct {
		name        string
		labels, ann map[string]string
		kube        memqos.KubeQoS
		err         string
	}{
		{"malformed annotation", nil, map[string]string{AnnotationMemoryQoS: `{"policy":`}, memqos.Burstable,
			"annotation koordinator.sh/memoryQOS: malformed JSON"},
		{"bad legacy annotation", nil, map[string]string{LegacyAnnotationMemoryQoS: `{"policy":"yes"}`}, memqos.Burstable,
			`annotation alibabacloud.com/memoryQOS: policy: "yes" is not one of auto, default, none`},
		{"bad parameter", nil, map[string]string{AnnotationMemoryQoS: `{"wmarkMinAdj": -30}`}, memqos.Burstable,
			"annotation koordinator.sh/memoryQOS: wmarkMinAdj: -30 is out of range -25..50"},
		{"oversized annotation", nil, map[string]string{AnnotationMemoryQoS: `{"policy": "auto"` + strings.Repeat(" ", 4<<10) + `}`}, memqos.Burstable,
			"annotation koordinator.sh/memoryQOS: 4114 bytes, at most 4096"},
		{"unknown class", map[string]string{LabelQoSClass: "GOLD"}, nil, "", `label koordinator.sh/qosClass: "GOLD" is not one of`},
		{"unknown legacy class", nil, map[string]string{LegacyQoSClass: "x"}, "", `annotation alibabacloud.com/qosClass: "x"`},
		{"no class", nil, nil, "", "no QoS class"},
		{"unknown Kubernetes class", nil, nil, "Premium", `Kubernetes QoS class "Premium"`},
	}
	for _, tc := range cases {
		w, err := MemQoSOf("ns", tc.labels, tc.ann, tc.kube, cs)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
		if len(w.Containers) != 1 || w.Namespace != "ns" {
			t.Errorf("%s: the workload lost its containers: %+v", tc.name, w)
		}
	}
}

// TestPodTextReadOnArrival: a pod's memoryQOS and memoryLocality
// annotations are read as the pod is mapped, typed, and a bad one is said
// then, naming the field and the value; the memory sizes are kept.
func TestPodTextReadOnArrival(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Labels: map[string]string{LabelQoSClass: "LS"},
		Annotations: map[string]string{AnnotationMemoryQoS: `{"policy": "auto", "throttlingPercent": 90}`,
			AnnotationMemoryLocality: `{"policy": "bestEffort", "migrateIntervalMinutes": 5}`}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	var w Workload
	w.SetMemQoS(PodMemQoS(pod))
	w.SetMemoryLocality(pod.Annotations)
	mem := w.MemQoS
	if w.MemQoSInvalid != "" || mem.Pod.Policy != memqos.PolicyAuto || *mem.Pod.Params.ThrottlingPercent != 90 ||
		mem.PodKey != AnnotationMemoryQoS || mem.Class != memqos.ClassLS || mem.Namespace != "team" ||
		len(mem.Containers) != 1 || mem.Containers[0].RequestBytes != 1<<30 || mem.Containers[0].LimitBytes != 1<<30 {
		t.Fatalf("memory QoS %+v, invalid %q", mem, w.MemQoSInvalid)
	}
	if w.MemoryLocalityInvalid != "" || w.MemoryLocality == nil ||
		*w.MemoryLocality != (sloconfig.Locality{Policy: sloconfig.LocalityBestEffort, MigrateIntervalMinutes: 5}) {
		t.Fatalf("memory locality %+v, invalid %q", w.MemoryLocality, w.MemoryLocalityInvalid)
	}
	pod.Annotations[AnnotationMemoryQoS] = `{"policy": "on"}`
	pod.Annotations[AnnotationMemoryLocality] = `{"policy": "always"}`
	w.SetMemQoS(PodMemQoS(pod))
	w.SetMemoryLocality(pod.Annotations)
	if w.MemQoSInvalid != `annotation koordinator.sh/memoryQOS: policy: "on" is not one of auto, default, none` || len(w.MemQoS.Containers) != 1 {
		t.Errorf("bad memoryQOS: %q, %+v", w.MemQoSInvalid, w.MemQoS)
	}
	if w.MemoryLocalityInvalid != `koordinator.sh/memoryLocality.policy: "always" is not bestEffort or none` || w.MemoryLocality != nil {
		t.Errorf("bad memoryLocality: %q, %+v", w.MemoryLocalityInvalid, w.MemoryLocality)
	}
	delete(pod.Annotations, AnnotationMemoryLocality)
	if w.SetMemoryLocality(pod.Annotations); w.MemoryLocality != nil || w.MemoryLocalityInvalid != "" {
		t.Errorf("no memoryLocality: %+v, %q", w.MemoryLocality, w.MemoryLocalityInvalid)
	}
}

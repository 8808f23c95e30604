package workload

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/pkg/memqos"
)

// A pod's quantities are its author's: some parse at once and would then
// keep exact arithmetic busy for good ("e122222222111" is 0 × 10^122222222111).
// Every reader of a pod's resources answers at once, and none reads such a
// quantity as a number: no CPUs, no memory, no QoS of its own.
func TestOutOfBoundsQuantitiesReadAtOnce(t *testing.T) {
	for _, text := range []string{"e122222222111", "1e122222222111", "-1e122222222111"} {
		q := resource.MustParse(text)
		all := corev1.ResourceList{corev1.ResourceCPU: q, corev1.ResourceMemory: q, ResourceHugePages2Mi: q, "nvidia.com/gpu": q}
		c := corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{Requests: all, Limits: all}}
		pod := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{c}, Containers: []corev1.Container{c}}}
		pod.Annotations = map[string]string{AnnotationCPUSet: "true"}
		for _, r := range []struct {
			name string
			read func() any
		}{
			{"PodMemory", func() any { _, err := PodMemory(pod); return err }},
			{"PodMemQoS", func() any { w, _ := PodMemQoS(pod); return w.Containers[0] == memqos.Container{Name: "app"} }},
			{"PodCPULimits", func() any { return len(PodCPULimits(pod)) == 0 }},
			{"KubeQoS", func() any { return KubeQoS(pod) == corev1.PodQOSBestEffort }},
			{"ParseCPURequest", func() any { _, err := ParseCPURequest(pod); return err }},
			{"PodCPUNeed", func() any { return !PodCPUNeed(pod, nil, Trust{}, func(string, string, ...any) {}).Exclusive }},
			{"PodDeviceCounts", func() any { return PodDeviceCounts(pod)["nvidia.com/gpu"] <= 1 }},
		} {
			done := make(chan any, 1)
			go func() { done <- r.read() }()
			select {
			case got := <-done:
				if got == nil || got == false {
					t.Errorf("%s of %s: read as a number (%v)", r.name, text, got)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s of %s: no answer in 5 s", r.name, text)
			}
		}
	}
}

package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/workload"
)

// Pods with init containers and sidecars get as many CPUs as Kubernetes
// counts their limit: "side" a sidecar of 1 and an app container of 3 (4),
// "init" an init container of 6 and an app container of 2 (6). With
// container scope, the binding carries the partition: the sidecar's part
// and the app's, disjoint, making up the decided CPUs; the agents report
// the pods' CPUs as decided.
func TestWholePods(t *testing.T) {
	c := newCluster(t, 2, true)
	startScheduler(t)
	always := corev1.ContainerRestartPolicyAlways
	limit := func(n string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}}
	}
	for _, p := range []struct {
		name       string
		inits      []corev1.Container
		app, scope string
	}{
		{"side", []corev1.Container{{Name: "log", Image: "log", RestartPolicy: &always, Resources: limit("1")}}, "3", "container"},
		{"init", []corev1.Container{{Name: "fetch", Image: "fetch", Resources: limit("6")}}, "2", "pod"},
	} {
		cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: c.ns,
			Annotations: map[string]string{workload.AnnotationCPUSet: "true", workload.AnnotationCPUScope: p.scope}},
			Spec: corev1.PodSpec{InitContainers: p.inits,
				Containers: []corev1.Container{{Name: "app", Image: "app", Resources: limit(p.app)}}}})
	}
	pods := waitScheduled(t, c.ns, []string{"side", "init"})
	if got := pods["side"].rs.CPUs.Size(); got != 4 {
		t.Errorf("side: %d CPUs, want 4 (a sidecar of 1 beside an app container of 3)", got)
	}
	if got := pods["init"].rs.CPUs.Size(); got != 6 {
		t.Errorf("init: %d CPUs, want 6 (the init container's)", got)
	}
	rs := pods["side"].rs
	parts, err := workload.ParseContainerCPUSets(pods["side"].pod.Annotations[workload.AnnotationContainerCPUSets], workload.PodPartsBudget(pods["side"].pod, rs.CPUs))
	if err != nil || parts["log"].Size() != 1 || parts["app"].Size() != 3 || !parts["log"].Intersection(parts["app"]).IsEmpty() ||
		!parts["log"].Union(parts["app"]).Equals(rs.CPUs) {
		t.Errorf("side: partition %v, %v of %s", parts, err, rs.CPUs)
	}
	if raw, ok := pods["init"].pod.Annotations[workload.AnnotationContainerCPUSets]; ok {
		t.Errorf("init, pod scope: a partition %s", raw)
	}
	checkPlacements(t, pods)
	waitReported(t, c, pods)
}

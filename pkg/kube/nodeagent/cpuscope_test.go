package nodeagent_test

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// pinnedPod opts in to CPUs of its own with two containers of two CPUs
// each, dividing them among its containers when scope is container.
func pinnedPod(name, scope string) *corev1.Pod {
	ann := map[string]string{workload.AnnotationCPUSet: "true"}
	if scope != "" {
		ann[workload.AnnotationCPUScope] = scope
	}
	two := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "web", Image: "app", Resources: two}, {Name: "log", Image: "app", Resources: two}}}}
}

// The published NodeResourceTopology lists the containers' parts of a
// container-scope pod, as the agent applied them to the containers'
// cgroups, and none of a pod-scope pod.
func TestNRTContainerParts(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	split := n.create(pinnedPod("split", workload.ScopeContainer))
	whole := n.create(pinnedPod("whole", ""))
	n.start()

	var parts map[string]string
	waitNRT(t, n.name, "listing both pods and the split one's parts", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		parts = ct.Containers[n.ns+"/split"]
		return len(ct.Exclusive) == 2 && len(parts) == 2
	})
	waitNRT(t, n.name, "listing no parts of the pod-scope pod", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		_, listed := ct.Containers[n.ns+"/whole"]
		return !listed && len(ct.Containers) == 1 && maps.Equal(ct.Containers[n.ns+"/split"], parts)
	})
	_, ct, _ := nrtOf(t, n.name)
	held, err := cpuset.Parse(ct.Exclusive[n.ns+"/split"])
	if err != nil {
		t.Fatal(err)
	}
	web, errWeb := cpuset.Parse(parts["web"])
	log, errLog := cpuset.Parse(parts["log"])
	if errWeb != nil || errLog != nil || web.Size() != 2 || log.Size() != 2 || !web.Union(log).Equals(held) {
		t.Fatalf("parts %v of the pod's %s (%v, %v)", parts, held, errWeb, errLog)
	}
	for name, cpus := range parts {
		n.waitFile(n.kubelet.ContainerCgroup(split, name), "cpuset.cpus", cpus)
	}
	wholeCPUs := ct.Exclusive[n.ns+"/whole"]
	for _, name := range []string{"web", "log"} {
		n.waitFile(n.kubelet.ContainerCgroup(whole, name), "cpuset.cpus", wholeCPUs)
	}
}

package nodeagent_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

func decidedPod(name, status string, limit string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			"cpuset-scheduler": "true", workload.AnnotationResourceStatus: status}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit)}}}}},
	}
}

// The scheduler's decision (locus.io/resource-status) is applied as it is;
// one that conflicts with the node (CPUs taken by another pod, CPUs the
// node does not have) or names NUMA nodes its CPUs are not on is a
// CPUSetConflict Warning, and a malformed one a Warning naming the field.
// No pod is ever left broken: a pod whose decision cannot apply runs in the
// shared pool.
func TestSchedulerDecisions(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	pods := map[string]*corev1.Pod{}
	for _, p := range []*corev1.Pod{
		decidedPod("a-decided", `{"cpuset": "2-3", "numaNodes": [0], "policy": "full-pcpus"}`, "2"),
		decidedPod("b-overlaps", `{"cpuset": "3-4"}`, "2"),
		decidedPod("c-offline", `{"cpuset": "40"}`, "1"),
		decidedPod("d-malformed", `{"cpuset": 5}`, "1"),
		decidedPod("e-wrong-node", `{"cpuset": "5", "numaNodes": [0]}`, "1"),
	} {
		pods[p.Name] = n.create(p)
	}
	n.start()
	cg := func(name string) string { return n.kubelet.ContainerCgroup(pods[name], "app") }

	n.waitFile(cg("a-decided"), "cpuset.cpus", "2-3")
	n.waitFile(cg("a-decided"), "cpuset.mems", "0")
	n.waitFile(cg("e-wrong-node"), "cpuset.cpus", "5")
	n.waitFile(cg("e-wrong-node"), "cpuset.mems", "1")
	// d-malformed opted in too: the agent chose its CPU itself.
	dCPUs := n.waitFileMatch(cg("d-malformed"), "cpuset.cpus", "one CPU", func(s string) bool { return len(s) > 0 && len(s) <= 2 && s != "5" })

	// Shared pool: every CPU but the reserved ones and those held alone.
	shared := n.kubelet.File(cg("b-overlaps"), "cpuset.cpus")
	if shared == "" || shared == "3-4" || n.kubelet.File(cg("c-offline"), "cpuset.cpus") != shared {
		t.Errorf("b-overlaps %q and c-offline %q should share the pool", shared, n.kubelet.File(cg("c-offline"), "cpuset.cpus"))
	}

	waitEvent(t, n.ns, "Pod", "b-overlaps", corev1.EventTypeWarning, "CPUSetConflict", "3", "held exclusively")
	waitEvent(t, n.ns, "Pod", "c-offline", corev1.EventTypeWarning, "CPUSetConflict", "40", "offline")
	waitEvent(t, n.ns, "Pod", "d-malformed", corev1.EventTypeWarning, "InvalidResourceStatus", workload.AnnotationResourceStatus, "cpuset")
	waitEvent(t, n.ns, "Pod", "e-wrong-node", corev1.EventTypeWarning, "CPUSetConflict", "numaNodes [0]", "NUMA nodes [1]")

	waitNRT(t, n.name, "listing the applied decisions", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		return ct.Exclusive[n.ns+"/a-decided"] == "2-3" && ct.Exclusive[n.ns+"/e-wrong-node"] == "5" &&
			ct.Exclusive[n.ns+"/d-malformed"] == dCPUs && len(ct.Exclusive) == 3 && ct.Reserved == "0,8"
	})

	// A later decision for CPUs a running pod holds is refused, even for a
	// pod whose name sorts first: the running pod does not move.
	late := n.create(decidedPod("0-late", `{"cpuset": "3"}`, "1"))
	waitEvent(t, n.ns, "Pod", "0-late", corev1.EventTypeWarning, "CPUSetConflict", "3", "held exclusively")
	n.waitFile(n.kubelet.ContainerCgroup(late, "app"), "cpuset.cpus", shared)
	if got := n.kubelet.File(cg("a-decided"), "cpuset.cpus"); got != "2-3" {
		t.Fatalf("a-decided moved to %s", got)
	}
}

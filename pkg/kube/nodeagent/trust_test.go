package nodeagent_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// TestDecisionsOnlyFromTheScheduler: the agent applies a resource-status
// only under the scheduler's signature for the pod on this node, and only
// one the pod and the node allow. A BestEffort pod writing
// {"cpuset": "0-3"} itself (CPU 0 reserved) runs shared with an
// UntrustedResourceStatus Warning; so does a pod carrying another pod's
// signed decision, on CPUs the agent chooses since it opted in. A signed
// decision for a BestEffort pod, or naming reserved CPUs, is a
// ResourceStatusRefused Warning and the pod runs shared. A pod the
// scheduler decided is pinned as before.
func TestDecisionsOnlyFromTheScheduler(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	good := n.create(decidedPod("a-good", `{"cpuset": "2-3"}`, "2"))
	forged := n.createUnsigned(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "be-forged",
		Annotations: map[string]string{workload.AnnotationResourceStatus: `{"cpuset": "0-3"}`}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}})
	copied := decidedPod("copied", good.Annotations[workload.AnnotationResourceStatus], "2")
	copied.Annotations[workload.AnnotationDecisionSignature] = good.Annotations[workload.AnnotationDecisionSignature]
	copied = n.createUnsigned(copied)
	beSigned := decidedPod("be-signed", `{"cpuset": "4-5"}`, "2")
	beSigned.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	beSigned = n.create(beSigned)
	onReserved := n.create(decidedPod("on-reserved", `{"cpuset": "0,8"}`, "2"))
	n.start()
	cg := func(p *corev1.Pod) string { return n.kubelet.ContainerCgroup(p, "app") }

	n.waitFile(cg(good), "cpuset.cpus", "2-3")
	copiedCPUs := n.waitFileMatch(cg(copied), "cpuset.cpus", "two CPUs of its own", func(s string) bool {
		set, err := topology.ParseCPUList(s)
		return err == nil && set.Size() == 2 && s != "2-3"
	})
	waitEvent(t, n.ns, "Pod", "be-forged", corev1.EventTypeWarning, workload.ReasonUntrustedResourceStatus,
		workload.AnnotationResourceStatus, workload.AnnotationDecisionSignature, "running in the shared pool")
	waitEvent(t, n.ns, "Pod", "copied", corev1.EventTypeWarning, workload.ReasonUntrustedResourceStatus,
		"does not match", "the agent chooses the CPUs itself")
	waitEvent(t, n.ns, "Pod", "be-signed", corev1.EventTypeWarning, decide.ReasonResourceStatusRefused, "BestEffort")
	waitEvent(t, n.ns, "Pod", "on-reserved", corev1.EventTypeWarning, decide.ReasonResourceStatusRefused, "CPUs 0,8 are reserved")

	waitNRT(t, n.name, "listing the scheduler's pod and the copied one only", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		return len(ct.Exclusive) == 2 && ct.Exclusive[n.ns+"/a-good"] == "2-3" && ct.Exclusive[n.ns+"/copied"] == copiedCPUs
	})
	shared := n.kubelet.File(cg(forged), "cpuset.cpus")
	set, err := topology.ParseCPUList(shared)
	if err != nil || set.Size() != 16-2-2-2 || set.Contains(0) || set.Contains(2) {
		t.Fatalf("be-forged on %q, want the shared pool: every CPU but the reserved 0,8 and those held alone", shared)
	}
	for _, p := range []*corev1.Pod{beSigned, onReserved} {
		n.waitFile(cg(p), "cpuset.cpus", shared)
	}
}

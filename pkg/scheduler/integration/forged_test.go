package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// TestForgedDecisions: decisions only from their author. A BestEffort pod
// whose author wrote every CPU but the reserved core as its
// resource-status, and an opted-in pod carrying another pod's signed
// decision, are bound by hand to a node whose agent and the real scheduler
// hold the chart's key: neither is pinned to those CPUs (the first runs
// shared, the second on CPUs its agent chooses) and each gets an
// UntrustedResourceStatus Warning; neither holds CPUs in the scheduler's
// books, so pods the scheduler places after them are placed, signed, and
// pinned by the agent as before.
func TestForgedDecisions(t *testing.T) {
	c := newCluster(t, 1, true)
	node := c.names()[0]
	startScheduler(t)
	createPod(t, c.ns, "real", "1", "4", nil)
	real := waitScheduled(t, c.ns, []string{"real"})["real"]

	forged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "be-forged", Namespace: c.ns,
		Annotations: map[string]string{workload.AnnotationResourceStatus: `{"cpuset": "1-7,9-15"}`}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
	copied := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "copied", Namespace: c.ns, Annotations: map[string]string{
		workload.AnnotationCPUSet:            "true",
		workload.AnnotationResourceStatus:    real.pod.Annotations[workload.AnnotationResourceStatus],
		workload.AnnotationDecisionSignature: real.pod.Annotations[workload.AnnotationDecisionSignature]}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}}}}
	cp.CreatePod(t, forged)
	cp.CreatePod(t, copied)
	for _, name := range []string{"be-forged", "copied"} {
		waitWarning(t, c.ns, name, workload.ReasonUntrustedResourceStatus)
	}
	// The copied pod is opted in: its agent chooses 4 CPUs for it, not
	// the real pod's; the BestEffort one holds none.
	var copiedCPUs string
	waitNRT(t, node, "the copied pod on CPUs of its own", func(ct nrt.CPUTopology) error {
		copiedCPUs = ct.Exclusive[c.ns+"/copied"]
		if _, be := ct.Exclusive[c.ns+"/be-forged"]; be || copiedCPUs == "" || copiedCPUs == real.rs.CPUs.String() ||
			ct.Exclusive[c.ns+"/real"] != real.rs.CPUs.String() {
			return fmt.Errorf("exclusive %v", ct.Exclusive)
		}
		return nil
	})

	createPod(t, c.ns, "after", "1", "4", nil)
	after := waitScheduled(t, c.ns, []string{"after"})
	all := map[string]placed{"real": real, "after": after["after"]}
	checkSigned(t, all)
	waitNRT(t, node, "the scheduler's pods on the CPUs it chose", func(ct nrt.CPUTopology) error {
		if ct.Exclusive[c.ns+"/after"] != after["after"].rs.CPUs.String() || ct.Exclusive[c.ns+"/real"] != real.rs.CPUs.String() ||
			ct.Exclusive[c.ns+"/copied"] != copiedCPUs || len(ct.Exclusive) != 3 {
			return fmt.Errorf("exclusive %v", ct.Exclusive)
		}
		return nil
	})
}

// waitWarning waits for a Warning Event with this reason on the pod.
func waitWarning(t *testing.T, ns, pod, reason string) {
	t.Helper()
	kubetest.WaitFor(t, "a "+reason+" Warning on "+pod, 30*time.Second, func(ctx context.Context) (bool, error) {
		evs, err := cp.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == reason {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events, none %s", len(evs.Items), reason)
	})
}

// waitNRT waits until the node's report satisfies ok.
func waitNRT(t *testing.T, node, what string, ok func(nrt.CPUTopology) error) {
	t.Helper()
	kubetest.WaitFor(t, node+"'s report: "+what, 30*time.Second, func(ctx context.Context) (bool, error) {
		u, err := cp.Dynamic.Resource(nrt.GVR).Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ct, err := nrt.ReadCPUTopology(u.GetAnnotations()[nrt.AnnotationCPUTopology])
		if err != nil {
			return false, err
		}
		if err := ok(ct); err != nil {
			return false, err
		}
		return true, nil
	})
}

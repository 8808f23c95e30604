package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
)

// resourceStatus is the scheduler's decision on the pod (docs/kubernetes.md),
// signed in decisionSignature for the pod on its node (docs/security.md).
const (
	resourceStatus    = "locus.io/resource-status"
	decisionSignature = "locus.io/resource-status-signature"
)

// Scenario 1: the seed's nginx Deployment with cpuset-scheduler "true" goes
// through a real kube-controller-manager (Deployment, ReplicaSet) to
// locus-scheduler, which binds its pod and writes the exact CPUs on it,
// signed with the chart's key; the agent applies them: the container's real cpuset.cpus and its processes'
// Cpus_allowed_list are the annotated CPUs, and a pod already running in the
// shared pool is moved off them.
func TestSchedulerBindsSeedDeployment(t *testing.T) {
	n := need(t)
	n.labelNode(t, "policy", "intel7")
	ns := n.namespace(t, "sched")
	shared := n.createPod(t, ns, podSpec{name: "shared", args: []string{"-children", "1"}})
	shared = n.waitRunning(t, ns, shared.Name)
	sharedDir := n.containerCgroup(t, shared, "w", "cpuset")
	checkAllowed(t, sharedDir, "0-1")

	n.applySeed(t, ns, "test/e2e/testdata/nginx.yaml", "-children", "2")
	var pod *corev1.Pod
	kubetest.WaitFor(t, "the Deployment's pod bound with "+resourceStatus, podTimeout, func(ctx context.Context) (bool, error) {
		l, err := n.cp.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil || len(l.Items) != 1 {
			return false, fmt.Errorf("%d pods (%v)", len(l.Items), err)
		}
		p := l.Items[0]
		if p.Spec.NodeName == "" || p.Annotations[resourceStatus] == "" || p.Annotations[decisionSignature] == "" {
			return false, fmt.Errorf("pod %s: node %q, %s %q, %s %q", p.Name, p.Spec.NodeName, resourceStatus, p.Annotations[resourceStatus],
				decisionSignature, p.Annotations[decisionSignature])
		}
		pod = &p
		return true, nil
	})
	var decision struct {
		CPUSet    string `json:"cpuset"`
		NUMANodes []int  `json:"numaNodes"`
	}
	if err := json.Unmarshal([]byte(pod.Annotations[resourceStatus]), &decision); err != nil {
		t.Fatalf("%s %q: %v", resourceStatus, pod.Annotations[resourceStatus], err)
	}
	cpus, err := cpuset.Parse(decision.CPUSet)
	if err != nil || cpus.Size() != 1 {
		t.Fatalf("%s %q: want one CPU", resourceStatus, pod.Annotations[resourceStatus])
	}
	t.Logf("bound to %s with %s", pod.Spec.NodeName, pod.Annotations[resourceStatus])
	n.waitEvent(t, ns, "Pod", pod.Name, corev1.EventTypeNormal, "Scheduled", "Successfully assigned "+ns+"/"+pod.Name+" to "+n.name)

	pod = n.waitRunning(t, ns, pod.Name)
	dir := n.containerCgroup(t, pod, "nginx", "cpuset")
	waitFile(t, filepath.Join(dir, "cpuset.cpus"), cpus.String())
	waitFile(t, filepath.Join(dir, "cpuset.mems"), "0")
	checkAllowed(t, dir, cpus.String())
	n.waitEvent(t, ns, "Pod", pod.Name, corev1.EventTypeNormal, "CPUsAssigned")

	others := cpuset.New(0, 1).Difference(cpus).String()
	waitFile(t, filepath.Join(sharedDir, "cpuset.cpus"), others)
	checkAllowed(t, sharedDir, others)
}

// labelNode sets a label on the node for one test.
func (n *e2eNode) labelNode(t *testing.T, key, value string) {
	t.Helper()
	set := func(v any) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
		if _, err := n.cp.Client.CoreV1().Nodes().Patch(context.Background(), n.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Errorf("label node %s: %v", n.name, err)
		}
	}
	set(value)
	t.Cleanup(func() { set(nil) })
}

// A pod's own resource-status is not the scheduler's: a BestEffort pod
// writing every CPU of the node as its decision is not pinned (it runs in
// the shared pool like any other) and gets an UntrustedResourceStatus
// Warning naming the annotation.
func TestForgedResourceStatusNotApplied(t *testing.T) {
	n := need(t)
	ns := n.namespace(t, "forged")
	// The warning is what this test asks for, not a problem of the pods.
	n.expected[ns+"/UntrustedResourceStatus"] = true
	n.createPod(t, ns, podSpec{name: "forged", annotations: map[string]string{resourceStatus: `{"cpuset": "0-1"}`}})
	n.createPod(t, ns, podSpec{name: "shared"})
	forged := n.waitRunning(t, ns, "forged")
	shared := n.waitRunning(t, ns, "shared")
	n.waitEvent(t, ns, "Pod", "forged", corev1.EventTypeWarning, "UntrustedResourceStatus", resourceStatus, decisionSignature)
	want := readFile(t, filepath.Join(n.containerCgroup(t, shared, "w", "cpuset"), "cpuset.cpus"))
	waitFile(t, filepath.Join(n.containerCgroup(t, forged, "w", "cpuset"), "cpuset.cpus"), want)
	for _, e := range n.events(t, ns, "Pod", "forged", "CPUsAssigned") {
		t.Errorf("the forged pod was pinned: %s", e.Message)
	}
}

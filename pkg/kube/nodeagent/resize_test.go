package nodeagent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// actuated acts as a kubelet with in-place resize (on by default since
// Kubernetes 1.33): the status of the pod's containers reports the
// resources in force, as they are in spec now. The apiserver refuses to
// resize a running pod whose status reports none.
func (n *node) actuated(pod *corev1.Pod) *corev1.Pod {
	n.t.Helper()
	pods := cp.Client.CoreV1().Pods(n.ns)
	cur, err := pods.Get(callCtx(n.t), pod.Name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	for i := range cur.Status.ContainerStatuses {
		cur.Status.ContainerStatuses[i].Resources = cur.Spec.Containers[i].Resources.DeepCopy()
	}
	if cur, err = pods.UpdateStatus(callCtx(n.t), cur, metav1.UpdateOptions{}); err != nil {
		n.t.Fatalf("actuate the resources of %s: %v", pod.Name, err)
	}
	return cur
}

// resize resizes a pod's one container in place through the pod's resize
// subresource (the desired CPUs, in spec), then acts as the kubelet that
// actuates it.
func (n *node) resize(pod *corev1.Pod, cpus string) *corev1.Pod {
	n.t.Helper()
	ctx := callCtx(n.t)
	pods := cp.Client.CoreV1().Pods(n.ns)
	cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	q := resource.MustParse(cpus)
	r := &cur.Spec.Containers[0].Resources
	r.Limits[corev1.ResourceCPU], r.Requests[corev1.ResourceCPU] = q, q
	if _, err = pods.UpdateResize(ctx, pod.Name, cur, metav1.UpdateOptions{}); err != nil {
		n.t.Fatalf("resize %s to %s CPUs: %v", pod.Name, cpus, err)
	}
	return n.actuated(pod)
}

// A pinned pod resized in place keeps the CPUs it has: it grows beside
// them on its node and shrinks inside them, its cpuset.mems follows, and
// the NodeResourceTopology reports the set in force rather than the
// scheduler's decision. A grow that cannot fit keeps the set and is told
// once as a ResizeInfeasible Warning, and in the status's problems.
func TestInPlaceResize(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	pod := decidedPod("pinned", `{"cpuset": "1,9", "numaNodes": [0]}`, "2")
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	pod = n.actuated(n.create(pod))
	n.start()
	cg := n.kubelet.ContainerCgroup(pod, "app")
	n.waitFile(cg, "cpuset.cpus", "1,9")

	// Grow to 4: the core beside it on node 0 (core 0, CPUs 0 and 8, is
	// reserved).
	n.resize(pod, "4")
	n.waitFile(cg, "cpuset.cpus", "1-2,9-10")
	n.waitFile(cg, "cpuset.mems", "0")
	waitNRT(t, n.name, "listing the grown set", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		return ct.Exclusive[n.ns+"/pinned"] == "1-2,9-10"
	})

	// Grow to 6: node 0 has one more whole core (3 and 11); then node 1.
	n.resize(pod, "6")
	n.waitFile(cg, "cpuset.cpus", "1-3,9-11")

	// Shrink to 1: whole cores go first, the last core is split.
	n.resize(pod, "1")
	n.waitFile(cg, "cpuset.cpus", "1")
	n.waitFile(cg, "cpuset.mems", "0")

	// Grow to 16: more than the node has beside its reserved core. The pod
	// keeps CPU 1 and is told once.
	n.resize(pod, "16")
	waitEvent(t, n.ns, "Pod", "pinned", corev1.EventTypeWarning, "ResizeInfeasible", "16 CPUs", "15 more CPUs asked beside 1, 13 free")
	if got := n.kubelet.File(cg, "cpuset.cpus"); got != "1" {
		t.Fatalf("cpuset.cpus = %q after a grow that cannot fit, want 1 kept", got)
	}
	waitStatus(t, n, "the ResizeInfeasible problem", func() bool {
		w, ok := findWorkload(n.status(), n.ns+"/pinned")
		return ok && slices.ContainsFunc(w.Problems, func(p string) bool { return strings.Contains(p, "ResizeInfeasible") })
	})

	// A count that fits applies: back to its core.
	n.resize(pod, "2")
	n.waitFile(cg, "cpuset.cpus", "1,9")
	waitStatus(t, n, "no problem left", func() bool {
		w, ok := findWorkload(n.status(), n.ns+"/pinned")
		return ok && len(w.Problems) == 0
	})
}

// waitStatus waits until the agent's status satisfies ok.
func waitStatus(t *testing.T, n *node, what string, ok func() bool) {
	t.Helper()
	kubetest.WaitFor(t, "status with "+what, 20*time.Second, func(context.Context) (bool, error) {
		return ok(), nil
	})
}

package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// Two nodes hold six 4-CPU pods. A pod that fits nowhere stays Pending and
// its PodScheduled condition says why; deleting a pod frees its CPUs for
// the next one, which is bound at once on them.
func TestPendingUntilFreed(t *testing.T) {
	c := newCluster(t, 2, true)
	startScheduler(t)
	names := []string{"p-0", "p-1", "p-2", "p-3", "p-4", "p-5"}
	for _, n := range names {
		createPod(t, c.ns, n, "1", "4", nil)
	}
	pods := waitScheduled(t, c.ns, names)
	checkPlacements(t, pods)

	createPod(t, c.ns, "huge", "1", "16", nil)
	msg := waitPending(t, c.ns, "huge", "0/2 nodes are available", "2 node(s) had not enough free CPUs for 16 exclusive CPUs")
	t.Logf("huge: %s", msg)
	createPod(t, c.ns, "next", "1", "4", nil)
	waitPending(t, c.ns, "next", "2 node(s) had not enough free CPUs for 4 exclusive CPUs (full-pcpus-then-threads)")

	gone := pods["p-0"]
	if err := cp.Client.CoreV1().Pods(c.ns).Delete(callCtx(t), "p-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	delete(pods, "p-0")
	next := waitScheduled(t, c.ns, []string{"next"})["next"]
	if next.pod.Spec.NodeName != gone.pod.Spec.NodeName {
		t.Errorf("next went to %s; only %s had room", next.pod.Spec.NodeName, gone.pod.Spec.NodeName)
	}
	pods["next"] = next
	checkPlacements(t, pods)
	waitReported(t, c, pods)
	waitPending(t, c.ns, "huge", "not enough free CPUs for 16 exclusive CPUs")
}

// Nodes whose NodeResourceTopology is missing, describes another machine
// or has not been rewritten for longer than nrtMaxAge (its agent stopped)
// take no pods, and the pod's condition names all three; once a right
// report is published the pod is scheduled without being touched.
func TestUnusableReports(t *testing.T) {
	c := newCluster(t, 3, false)
	startScheduler(t)
	stale, missing, silent := c.ns+"-0", c.ns+"-1", c.ns+"-2"
	big := fixture.Shape{Name: "big", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 8, ThreadsPerCore: 2,
		Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}
	publish(t, stale, big, nil)
	publishAt(t, silent, machine, time.Now().Add(-10*time.Minute))
	createPod(t, c.ns, "p", "1", "4", nil)
	waitPending(t, c.ns, "p", "0/3 nodes are available",
		"1 node(s) had a stale NodeResourceTopology", "1 node(s) had no NodeResourceTopology from the locus agent",
		"1 node(s) whose locus agent stopped reporting")
	publish(t, missing, machine, nil)
	if got := waitScheduled(t, c.ns, []string{"p"})["p"]; got.pod.Spec.NodeName != missing {
		t.Fatalf("p went to %s", got.pod.Spec.NodeName)
	}
}

// A report whose agent is back (a new heartbeat) takes pods again: a pod
// pending only because of the silent node is bound to it.
func TestSilentAgentBack(t *testing.T) {
	c := newCluster(t, 1, false)
	startScheduler(t)
	node := c.ns + "-0"
	publishAt(t, node, machine, time.Now().Add(-10*time.Minute))
	createPod(t, c.ns, "p", "1", "4", nil)
	waitPending(t, c.ns, "p", "0/1 nodes are available", "1 node(s) whose locus agent stopped reporting")
	u, err := cp.Dynamic.Resource(nrt.GVR).Get(callCtx(t), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ann := u.GetAnnotations()
	ann[nrt.AnnotationHeartbeat] = time.Now().UTC().Format(time.RFC3339)
	u.SetAnnotations(ann)
	if _, err := cp.Dynamic.Resource(nrt.GVR).Update(callCtx(t), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := waitScheduled(t, c.ns, []string{"p"})["p"]; got.pod.Spec.NodeName != node {
		t.Fatalf("p went to %s", got.pod.Spec.NodeName)
	}
}

// publishAt publishes an empty node's report as an agent whose last
// heartbeat was at.
func publishAt(t *testing.T, node string, s fixture.Shape, at time.Time) {
	t.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(s), Reserved: reserved})
	if err != nil {
		t.Fatal(err)
	}
	o.Metadata.Annotations[nrt.AnnotationHeartbeat] = at.UTC().Format(time.RFC3339)
	if _, err := cp.Dynamic.Resource(nrt.GVR).Create(callCtx(t), toUnstructured(t, o), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A restarted scheduler knows the CPUs it gave before from the pods'
// decisions alone: here no agent runs, so the reports never list them.
func TestRestartRebuildsFromDecisions(t *testing.T) {
	c := newCluster(t, 1, false)
	node := c.names()[0]
	publish(t, node, machine, nil)
	stop := startScheduler(t)
	for _, n := range []string{"a-0", "a-1"} {
		createPod(t, c.ns, n, "1", "4", nil)
	}
	before := waitScheduled(t, c.ns, []string{"a-0", "a-1"})
	stop()

	startScheduler(t)
	createPod(t, c.ns, "b-0", "1", "4", nil)
	after := waitScheduled(t, c.ns, []string{"b-0"})
	all := map[string]placed{"b-0": after["b-0"]}
	for k, v := range before {
		all[k] = v
	}
	checkPlacements(t, all)
	createPod(t, c.ns, "b-1", "1", "4", nil) // the node holds three
	waitPending(t, c.ns, "b-1", "1 node(s) had not enough free CPUs for 4 exclusive CPUs")
}

// publish writes a node's NodeResourceTopology as its agent would.
func publish(t *testing.T, node string, s fixture.Shape, held map[string]workload.Assignment) {
	t.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(s), Reserved: reserved, Assignments: held})
	if err != nil {
		t.Fatal(err)
	}
	u := toUnstructured(t, o)
	if _, err := cp.Dynamic.Resource(nrt.GVR).Create(callCtx(t), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, "report "+node, 10*time.Second, func(ctx context.Context) (bool, error) {
		_, err := cp.Dynamic.Resource(nrt.GVR).Get(ctx, node, metav1.GetOptions{})
		return err == nil, err
	})
}

func toUnstructured(t *testing.T, o *nrt.Object) *unstructured.Unstructured {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

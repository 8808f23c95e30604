package core

import (
	"fmt"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// When few nodes changed, a snapshot is the last one with those nodes
// replaced: the changed views are new, a removed report's node is gone,
// the others are the same views, and the snapshot handed out before is
// untouched.
func TestSnapshotPatchesChangedNodes(t *testing.T) {
	c := NewCluster()
	for i := range 16 { // two changes of sixteen: the patched path
		node := fmt.Sprintf("n%d", i)
		c.SetNRT(node, publish(t, twoNode, node, reservedCore, nil))
	}
	before := c.Snapshot()
	mustPlace(t, c, "ns/a", "n1", req(4, "", 0))
	c.DeleteNRT("n2")
	after := c.Snapshot()
	if before.Len() != 16 || after.Len() != 15 {
		t.Fatalf("%d nodes before, %d after; want 16 and 15", before.Len(), after.Len())
	}
	if after.Get("n2") != nil {
		t.Error("n2's report was deleted but the snapshot still has it")
	}
	if before.Get("n2") == nil || !before.Get("n1").State().Exclusive.IsEmpty() {
		t.Error("the earlier snapshot changed")
	}
	if after.Get("n1").State().Exclusive.Size() != 4 {
		t.Errorf("n1 after placing: exclusive %s", after.Get("n1").State().Exclusive.CPUSet())
	}
	for _, node := range []string{"n0", "n3", "n15"} {
		if after.Get(node) != before.Get(node) {
			t.Errorf("%s did not change but has a new view", node)
		}
	}
	seen := map[string]bool{}
	for node, v := range after.All() {
		if v == nil || v.Name != node || seen[node] {
			t.Errorf("All yielded %s: %v (seen before: %v)", node, v, seen[node])
		}
		seen[node] = true
	}
	if len(seen) != 15 || seen["n2"] {
		t.Errorf("All yielded %d nodes (n2 among them: %v), want the 15 left", len(seen), seen["n2"])
	}
}

// A patched snapshot copies only the chunks of the nodes that changed; a
// node it has no slot for (a new one) makes a new snapshot with it.
func TestSnapshotSharesUnchangedChunks(t *testing.T) {
	c := NewCluster()
	const nodes = 4 * chunkSize
	for i := range nodes {
		node := fmt.Sprintf("n%d", i)
		c.SetNRT(node, publish(t, twoNode, node, reservedCore, nil))
	}
	before := c.Snapshot()
	mustPlace(t, c, "ns/a", "n7", req(2, "", 0))
	after := c.Snapshot()
	changed := after.slots.of["n7"] >> chunkBits
	for k := range after.chunks {
		if shared := after.chunks[k] == before.chunks[k]; shared == (k == changed) {
			t.Errorf("chunk %d shared %v; only chunk %d (n7's) should be copied", k, shared, changed)
		}
	}
	c.SetNRT("new", publish(t, twoNode, "new", reservedCore, nil))
	grown := c.Snapshot()
	if grown.Len() != nodes+1 || grown.Get("new") == nil || grown.Get("n7") != after.Get("n7") {
		t.Errorf("after a new node: %d nodes, new %v, n7 kept %v", grown.Len(), grown.Get("new"), grown.Get("n7") == after.Get("n7"))
	}
	if after.Get("new") != nil || after.Len() != nodes {
		t.Error("the snapshot handed out before the new node changed")
	}
}

// A bound pod without a decision that its node's report does not list
// holds nothing the state sees: its node keeps its view, and its deletion
// frees nothing. One the report lists counts.
func TestPlainPodsLeaveViews(t *testing.T) {
	c := NewCluster()
	listed := map[string]workload.Assignment{"ns/listed": {CPUs: cpuset.New(1, 9), Policy: cpualloc.FullPCPUs}}
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, listed))
	before := c.Snapshot().Get("n1")
	c.SetPod("ns/plain", "n1", nil)
	if c.Snapshot().Get("n1") != before {
		t.Error("a plain pod rebuilt its node's view")
	}
	if c.DeletePod("ns/plain") {
		t.Error("deleting a plain pod freed something")
	}
	c.SetPod("ns/listed", "n1", nil)
	v := c.Snapshot().Get("n1")
	if v == before || !v.State().Exclusive.CPUSet().Equals(cpuset.New(1, 9)) {
		t.Fatalf("a pod the report lists: exclusive %s", v.State().Exclusive.CPUSet())
	}
	if !c.DeletePod("ns/listed") {
		t.Error("deleting a pod the report lists freed nothing")
	}
	if ex := c.Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.IsEmpty() {
		t.Errorf("after its deletion: exclusive %s", ex)
	}
}

// A pod bound where it was assumed, with the decision it was given, holds
// what it held: its node keeps its view. Bound with another decision, the
// node's view changes.
func TestBindingAsAssumedKeepsView(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	r := req(4, "", 0)
	p := mustPlace(t, c, "ns/a", "n1", r)
	assumedView := c.Snapshot().Get("n1")
	c.SetPod("ns/a", "n1", decision(p, r))
	if c.Snapshot().Get("n1") != assumedView {
		t.Error("binding a pod as assumed rebuilt its node's view")
	}
	if _, _, ok := c.Assumed("ns/a"); ok {
		t.Error("the bound pod is still assumed")
	}
	if !c.DeletePod("ns/a") || !c.Snapshot().Get("n1").State().Exclusive.IsEmpty() {
		t.Error("the bound pod's CPUs are not freed by its deletion")
	}

	q := mustPlace(t, c, "ns/b", "n1", r)
	other := &workload.Assignment{CPUs: cpuset.New(7, 15), Policy: cpualloc.FullPCPUs}
	c.SetPod("ns/b", "n1", other)
	if ex := c.Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.Equals(other.CPUs) || ex.Equals(q.Result.CPUs) {
		t.Errorf("bound with another decision: exclusive %s, want %s", ex, other.CPUs)
	}
}

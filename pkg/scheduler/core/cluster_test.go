package core

import (
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

func decision(p Placement, r Request) *workload.Assignment {
	return &workload.Assignment{CPUs: p.Result.CPUs, Policy: p.Result.Policy, RequestMilli: r.RequestMilli}
}

// A restarted scheduler has no assumed allocations: it rebuilds the state
// from the decisions the bound pods carry, before the agent has reported
// any of them, and places the next pod around them.
func TestRestartRebuildsFromPods(t *testing.T) {
	before := NewCluster()
	before.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	r, burst := req(4, "", 0), req(4, cpualloc.StaticBurst, 1000)
	decided := map[string]*workload.Assignment{}
	for _, key := range []string{"ns/a", "ns/b"} {
		decided[key] = decision(mustPlace(t, before, key, "n1", r), r)
	}
	decided["ns/burst"] = decision(mustPlace(t, before, "ns/burst", "n1", burst), burst)
	want := before.Snapshot().Get("n1")

	after := NewCluster()
	after.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil)) // the agent reported nothing yet
	for key, d := range decided {
		after.SetPod(key, "n1", d)
	}
	got := after.Snapshot().Get("n1")
	if !got.State().Exclusive.CPUSet().Equals(want.State().Exclusive.CPUSet()) || len(got.State().BurstMilli) != len(want.State().BurstMilli) ||
		got.FreeMilli() != want.FreeMilli() {
		t.Fatalf("rebuilt state: exclusive %s burst %v free %d; before the restart: %s %v %d",
			got.State().Exclusive.CPUSet(), got.State().BurstMilli, got.FreeMilli(), want.State().Exclusive.CPUSet(), want.State().BurstMilli, want.FreeMilli())
	}
	for id, m := range want.State().BurstMilli {
		if got.State().BurstMilli[id] != m {
			t.Fatalf("cpu %d: burst %d after restart, %d before", id, got.State().BurstMilli[id], m)
		}
	}
	// Once the agent reports the same holdings they count once.
	held := map[string]workload.Assignment{}
	for key, d := range decided {
		held[key] = *d
	}
	after.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, held))
	if v := after.Snapshot().Get("n1"); v.FreeMilli() != want.FreeMilli() || v.Holdings != 3 {
		t.Fatalf("with the agent's report: free %d holdings %d, want %d and 3", v.FreeMilli(), v.Holdings, want.FreeMilli())
	}
	next := mustPlace(t, after, "ns/c", "n1", req(2, "", 0)) // the last free core
	if !next.Result.CPUs.Intersection(want.State().Exclusive.CPUSet()).IsEmpty() {
		t.Fatalf("next pod got %s, overlapping %s", next.Result.CPUs, want.State().Exclusive.CPUSet())
	}
}

// Reserve, then Unreserve (the binding failed): the CPUs are free again. A
// bound pod carrying its decision replaces the assumed allocation; deleting
// it frees the CPUs.
func TestAssumeLifecycle(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	r := req(4, "", 0)
	p := mustPlace(t, c, "ns/a", "n1", r)
	if node, a, ok := c.Assumed("ns/a"); !ok || node != "n1" || !a.CPUs.Equals(p.Result.CPUs) {
		t.Fatalf("assumed: %v %s %+v", ok, node, a)
	}
	c.Forget("ns/a", "other-node") // not where it was assumed: no effect
	if !c.Snapshot().Get("n1").State().Exclusive.CPUSet().Equals(p.Result.CPUs) {
		t.Fatal("Forget on another node released the CPUs")
	}
	c.Forget("ns/a", "n1")
	if ex := c.Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.IsEmpty() {
		t.Fatalf("after Forget: exclusive %s", ex)
	}

	p = mustPlace(t, c, "ns/a", "n1", r)
	c.SetPod("ns/a", "", decision(p, r)) // annotated, not bound yet: the assumption stands
	if _, _, ok := c.Assumed("ns/a"); !ok {
		t.Fatal("an unbound pod dropped its assumed allocation")
	}
	c.SetPod("ns/a", "n1", decision(p, r))
	if _, _, ok := c.Assumed("ns/a"); ok {
		t.Fatal("the bound pod did not replace its assumed allocation")
	}
	if ex := c.Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.Equals(p.Result.CPUs) {
		t.Fatalf("bound pod: exclusive %s, want %s", ex, p.Result.CPUs)
	}
	c.DeletePod("ns/a")
	if ex := c.Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.IsEmpty() {
		t.Fatalf("after the pod was deleted: exclusive %s", ex)
	}
	// Deleting a pod while assumed, and removing the node, free too.
	mustPlace(t, c, "ns/b", "n1", r)
	c.DeletePod("ns/b")
	mustPlace(t, c, "ns/c", "n1", r)
	c.DeleteNode("n1")
	if ex := c.Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.IsEmpty() {
		t.Fatalf("after the node left: exclusive %s", ex)
	}
}

// The node changed between Filter and Reserve (another pod appeared on the
// CPUs Filter chose): Reserve places again instead of overlapping.
func TestAssumeOnChangedNode(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	r := req(4, "", 0)
	seen := c.Snapshot().Get("n1")
	p, err := Place(seen, 16, r)
	if err != nil {
		t.Fatal(err)
	}
	c.SetPod("ns/other", "n1", &workload.Assignment{CPUs: p.Result.CPUs, Policy: cpualloc.FullPCPUs})
	got, err := c.Assume("ns/a", "n1", seen, p, r)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Result.CPUs.Intersection(p.Result.CPUs).IsEmpty() {
		t.Fatalf("Reserve kept %s, which another pod took", got.Result.CPUs)
	}
	// When nothing is left, Reserve fails rather than overlap.
	seen = c.Snapshot().Get("n1")
	p, _ = Place(seen, 16, r)
	c.SetPod("ns/third", "n1", &workload.Assignment{CPUs: p.Result.CPUs, Policy: cpualloc.FullPCPUs})
	if _, err := c.Assume("ns/b", "n1", seen, p, r); kind(err) != Insufficient {
		t.Fatalf("Reserve on a full node: %v", err)
	}
}

// Nodes of one machine kind share one indexed topology; it goes when the
// last of them does.
func TestMachinesAreShared(t *testing.T) {
	c := NewCluster()
	for _, n := range []string{"n1", "n2"} {
		c.SetNRT(n, publish(t, twoNode, n, reservedCore, nil))
	}
	c.SetNRT("n3", publish(t, splitL3, "n3", cpuset.New(), nil))
	snap := c.Snapshot()
	if snap.Get("n1").Topology() != snap.Get("n2").Topology() || snap.Get("n1").Topology() == snap.Get("n3").Topology() {
		t.Fatal("same-kind nodes do not share their machine, or different kinds do")
	}
	if len(c.machines) != 2 {
		t.Fatalf("%d machines, want 2", len(c.machines))
	}
	c.DeleteNRT("n1")
	c.SetNRT("n2", publish(t, splitL3, "n2", cpuset.New(), nil)) // replaced by another machine
	if len(c.machines) != 1 {
		t.Fatalf("%d machines after the twoNode nodes left, want 1", len(c.machines))
	}
}

// Snapshots are immutable: one taken before a change still shows the
// state it was taken in, and an unchanged cluster hands out the same one.
func TestSnapshots(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	c.SetNRT("n2", publish(t, twoNode, "n2", reservedCore, nil))
	s1 := c.Snapshot()
	if s2 := c.Snapshot(); s2.Get("n1") != s1.Get("n1") {
		t.Fatal("an unchanged cluster built a new view")
	}
	mustPlace(t, c, "ns/a", "n1", req(4, "", 0))
	s3 := c.Snapshot()
	if !s1.Get("n1").State().Exclusive.IsEmpty() || s3.Get("n1").State().Exclusive.Size() != 4 {
		t.Fatalf("old snapshot %s, new %s", s1.Get("n1").State().Exclusive.CPUSet(), s3.Get("n1").State().Exclusive.CPUSet())
	}
	if s3.Get("n2") != s1.Get("n2") {
		t.Fatal("a change on n1 rebuilt n2's view")
	}
}

// SetNRT and DeletePod say when waiting pods are worth trying again: a
// node became usable or has more free CPU, a pod that held CPUs went. A
// report that only confirms what was counted frees nothing.
func TestFreedSignals(t *testing.T) {
	c := NewCluster()
	if !c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil)) {
		t.Error("a first report freed nothing")
	}
	r := req(4, "", 0)
	p := mustPlace(t, c, "ns/a", "n1", r)
	c.SetPod("ns/a", "n1", decision(p, r))
	held := map[string]workload.Assignment{"ns/a": *decision(p, r)}
	if c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, held)) {
		t.Error("a report confirming the decision freed something")
	}
	if c.SetNRT("n1", publish(t, twoNode, "n1", cpuset.New(0, 8, 7, 15), held)) {
		t.Error("a report reserving more freed something")
	}
	if !c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, held)) {
		t.Error("a report reserving less freed nothing")
	}
	if c.DeletePod("ns/never-bound") {
		t.Error("deleting an unknown pod freed something")
	}
	if !c.DeletePod("ns/a") {
		t.Error("deleting a bound pod freed nothing")
	}
}

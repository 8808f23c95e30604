package plugin

import (
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/scheduler/core"
)

// The views Filter and Score find by NodeInfo are the snapshot's views of
// those nodes, in every snapshot; the map is made once per set of slots
// from the framework's list, not once per node, and a NodeInfo outside the
// list is found too.
func TestNodeSlots(t *testing.T) {
	c := core.NewCluster()
	infos := []*framework.NodeInfo{node("late", "16"), node("none", "16")}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		infos = append(infos, node(name, "16"))
		c.SetNRT(name, report(t, name, nil))
	}
	lists := 0
	ns := nodeSlots{list: func() ([]*framework.NodeInfo, error) { lists++; return infos, nil }}
	check := func(snap *core.Snapshot, nis ...*framework.NodeInfo) {
		t.Helper()
		for range 2 {
			for _, ni := range nis {
				slot := ns.slot(snap, ni)
				got := snap.At(slot)
				if want := snap.Get(ni.Node().Name); got != want || slot != snap.Slot(ni.Node().Name) {
					t.Errorf("%s: view %p in slot %d, the snapshot's is %p in %d", ni.Node().Name, got, slot, want, snap.Slot(ni.Node().Name))
				}
			}
		}
	}
	first := c.Snapshot()
	check(first, infos...)
	if first.Get("a") == nil || first.Get("late") != nil || lists != 1 {
		t.Fatalf("a %v, late %v; the list was read %d times, want once", first.Get("a"), first.Get("late"), lists)
	}
	mustAssume(t, c, "ns/p", "a", first) // one node of eight changes, the slots stay
	second := c.Snapshot()
	check(second, infos...)
	if !second.SameSlots(first) || second.Get("a") == first.Get("a") || lists != 1 {
		t.Fatalf("after a change on a: same slots %v, a's view new %v, list read %d times",
			second.SameSlots(first), second.Get("a") != first.Get("a"), lists)
	}
	c.SetNRT("late", report(t, "late", nil)) // a new node: new slots
	third := c.Snapshot()
	check(third, infos...)
	if third.Get("late") == nil || lists != 2 {
		t.Fatalf("after a new node: late %v, list read %d times, want twice", third.Get("late"), lists)
	}
	check(third, node("b", "16")) // the same node under another NodeInfo
}

func mustAssume(t *testing.T, c *core.Cluster, key, node string, snap *core.Snapshot) {
	t.Helper()
	req := core.Request{}
	req.CPUs = 2
	pl, err := core.Place(snap.Get(node), 0, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Assume(key, node, snap.Get(node), pl, req); err != nil {
		t.Fatal(err)
	}
}

package plugin

import (
	"sync"
	"sync/atomic"

	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/scheduler/core"
)

// nodeSlots finds a node's view for Filter and Score by the framework's
// NodeInfo rather than by the node's name. Filter and Score are called
// for hundreds of nodes in every cycle, and hashing the name meant reading
// it from the Node object, one cache miss per call: in the 1000-node run
// that lookup was the plugin's largest cost. The framework keeps one
// NodeInfo per node for as long as the node exists (its snapshot updates
// it in place), so its address can key the node's slot (core.Snapshot.Slot)
// in every snapshot with the same slots.
type nodeSlots struct {
	cur   atomic.Pointer[slotMap]
	order atomic.Pointer[slotOrder] // see allFit
	mu    sync.Mutex                // rebuilds
	// list is the framework's NodeInfos, all of them at once: a node not in
	// the map makes the map anew from it, so that a cluster's first cycle
	// costs one pass over the nodes rather than one rebuild per node. Nil:
	// no list (a framework without a snapshot lister); every miss then adds
	// its one node.
	list func() ([]*framework.NodeInfo, error)
}

// slotMap is the slots of the nodes' NodeInfos in the snapshots with the
// same slots as snap. It is never changed once published.
type slotMap struct {
	snap *core.Snapshot
	of   map[*framework.NodeInfo]int
}

// slot is ni's node's slot in snap, -1 when it has no view there.
func (n *nodeSlots) slot(snap *core.Snapshot, ni *framework.NodeInfo) int {
	if m := n.cur.Load(); m != nil && m.snap.SameSlots(snap) {
		if i, ok := m.of[ni]; ok {
			return i
		}
	}
	return n.add(snap, ni)
}

// allFit says whether the sweep passes every node in the framework's
// list: then Filter, asked of any of them, would pass it. False without
// a list.
func (n *nodeSlots) allFit(snap *core.Snapshot, sw *core.Sweep) bool {
	if n.list == nil || sw == nil {
		return false
	}
	all, err := n.list()
	if err != nil || len(all) == 0 {
		return false
	}
	for _, slot := range n.orderOf(snap, all).slots {
		if _, fits := sw.Score(int(slot)); !fits {
			return false
		}
	}
	return true
}

// slotOrder is the slots of the nodes of one framework list, in its
// order. The framework makes a new list only when nodes come or go, and
// updates its NodeInfos in place otherwise.
type slotOrder struct {
	snap  *core.Snapshot // any with the same slots
	list  []*framework.NodeInfo
	slots []int32
}

// orderOf is all's slots in snap, made anew when the list or the slots
// changed.
func (n *nodeSlots) orderOf(snap *core.Snapshot, all []*framework.NodeInfo) *slotOrder {
	if o := n.order.Load(); o != nil && o.snap.SameSlots(snap) && len(o.list) == len(all) && &o.list[0] == &all[0] {
		return o
	}
	o := &slotOrder{snap: snap, list: all, slots: make([]int32, len(all))}
	for i, ni := range all {
		o.slots[i] = -1
		if node := ni.Node(); node != nil {
			o.slots[i] = int32(snap.Slot(node.Name))
		}
	}
	n.order.Store(o)
	return o
}

// add publishes a map that has ni, and returns ni's slot.
func (n *nodeSlots) add(snap *core.Snapshot, ni *framework.NodeInfo) int {
	node := ni.Node()
	if node == nil {
		return -1
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.cur.Load()
	if m != nil && m.snap.SameSlots(snap) {
		if i, ok := m.of[ni]; ok {
			return i // published while this call waited
		}
	}
	next := &slotMap{snap: snap, of: map[*framework.NodeInfo]int{}}
	if n.list != nil {
		if all, err := n.list(); err == nil {
			next.of = make(map[*framework.NodeInfo]int, len(all)+1)
			for _, x := range all {
				if x.Node() != nil {
					next.of[x] = snap.Slot(x.Node().Name)
				}
			}
		}
	} else if m != nil && m.snap.SameSlots(snap) {
		for x, i := range m.of {
			next.of[x] = i
		}
	}
	slot := snap.Slot(node.Name)
	next.of[ni] = slot
	n.cur.Store(next)
	return slot
}

package plugin

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/scheduler/core"
)

// nodeSlots finds a node's view for Filter and Score by the framework's
// NodeInfo rather than by the node's name (infoSlots). Filter and Score are called
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
	of   *infoSlots
}

// slot is ni's node's slot in snap, -1 when it has no view there.
func (n *nodeSlots) slot(snap *core.Snapshot, ni *framework.NodeInfo) int {
	if m := n.cur.Load(); m != nil && m.snap.SameSlots(snap) {
		if i, ok := m.of.get(ni); ok {
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
		if i, ok := m.of.get(ni); ok {
			return i // published while this call waited
		}
	}
	next := &slotMap{snap: snap, of: newInfoSlots(1)}
	if n.list != nil {
		if all, err := n.list(); err == nil {
			next.of = newInfoSlots(len(all) + 1)
			for _, x := range all {
				if x.Node() != nil {
					next.of.put(x, snap.Slot(x.Node().Name))
				}
			}
		}
	} else if m != nil && m.snap.SameSlots(snap) {
		next.of = newInfoSlots(m.of.n + 1)
		m.of.each(next.of.put)
	}
	slot := snap.Slot(node.Name)
	next.of.put(ni, slot)
	n.cur.Store(next)
	return slot
}

// infoSlots is a slot by NodeInfo, the NodeInfo known by its address: a
// table open-addressed by a hash of the address, at most half full, probed
// linearly. Score asks it for every node it scores (500 a cycle at 5000
// nodes); a Go map with pointer keys took 0.2 µs a look-up there (its
// directory, table and group of slots, each a cache miss), 1.35 s of CPU in
// a 25 000-pod pass. Filled before it is published, then only read.
type infoSlots struct {
	at    []infoSlot
	shift uint // 64 - log2(len(at))
	n     int
}

type infoSlot struct {
	ni   *framework.NodeInfo
	slot int
}

func newInfoSlots(n int) *infoSlots {
	size, bits := 8, uint(3)
	for size < 2*n {
		size, bits = size*2, bits+1
	}
	return &infoSlots{at: make([]infoSlot, size), shift: 64 - bits}
}

// home is where ni's probe starts: Fibonacci hashing of its address, whose
// high bits vary with every bit of it.
func (t *infoSlots) home(ni *framework.NodeInfo) int {
	return int(uint64(uintptr(unsafe.Pointer(ni))) * 0x9E3779B97F4A7C15 >> t.shift)
}

func (t *infoSlots) get(ni *framework.NodeInfo) (int, bool) {
	mask := len(t.at) - 1
	for i := t.home(ni); ; i = (i + 1) & mask {
		switch e := &t.at[i]; e.ni {
		case ni:
			return e.slot, true
		case nil:
			return 0, false
		}
	}
}

// put sets ni's slot; the table was made for at least as many NodeInfos as
// are put in it, so it stays at most half full.
func (t *infoSlots) put(ni *framework.NodeInfo, slot int) {
	mask := len(t.at) - 1
	for i := t.home(ni); ; i = (i + 1) & mask {
		e := &t.at[i]
		if e.ni == nil {
			t.n++
		}
		if e.ni == nil || e.ni == ni {
			e.ni, e.slot = ni, slot
			return
		}
	}
}

func (t *infoSlots) each(f func(*framework.NodeInfo, int)) {
	for _, e := range t.at {
		if e.ni != nil {
			f(e.ni, e.slot)
		}
	}
}

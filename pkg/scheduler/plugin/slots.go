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
	cur atomic.Pointer[slotMap]
	mu  sync.Mutex // rebuilds
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

// view is ni's node's view in snap, nil when it has none, and its slot
// (-1 for none).
func (n *nodeSlots) view(snap *core.Snapshot, ni *framework.NodeInfo) (*core.NodeView, int) {
	if m := n.cur.Load(); m != nil && m.snap.SameSlots(snap) {
		if i, ok := m.of[ni]; ok {
			return snap.At(i), i
		}
	}
	i := n.add(snap, ni)
	return snap.At(i), i
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

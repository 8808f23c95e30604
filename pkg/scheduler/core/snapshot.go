package core

import (
	"iter"
	"slices"
	"strings"
)

// chunkBits sizes a Snapshot's chunks: 64 views each.
const (
	chunkBits = 6
	chunkSize = 1 << chunkBits
)

// Snapshot is every node's view at one moment: nodes with a
// NodeResourceTopology, readable or not. It never changes, and stays valid
// while the cluster changes.
//
// Every scheduling cycle of a pod with CPUs of its own takes one, and
// between two cycles only the node or two a cycle assumed on have changed.
// So a snapshot shares with the one before it everything but the chunks
// holding those nodes: a new one costs a copy of the chunk index and of a
// chunk or two, not of a thousand-entry map (which, taken by every cycle,
// was most of the plugin's garbage at a thousand nodes).
type Snapshot struct {
	slots  *slots // shared, never changed
	chunks []*[chunkSize]*NodeView
	n      int // nodes with a view
}

// slots maps node names to their place in a Snapshot's chunks.
type slots struct{ of map[string]int }

// Get is the node's view, nil when it has no NodeResourceTopology.
func (s *Snapshot) Get(node string) *NodeView { return s.At(s.Slot(node)) }

// Slot is where the node's view lies in this snapshot and in every other
// with the same slots (SameSlots); -1 when it has none.
func (s *Snapshot) Slot(node string) int {
	if s == nil {
		return -1
	}
	if i, ok := s.slots.of[node]; ok {
		return i
	}
	return -1
}

// At is the view in a slot (Slot), nil for -1.
func (s *Snapshot) At(slot int) *NodeView {
	if s == nil || slot < 0 || slot>>chunkBits >= len(s.chunks) {
		return nil
	}
	return s.chunks[slot>>chunkBits][slot&(chunkSize-1)]
}

// SameSlots says whether o keeps its nodes in the same slots as s: a
// caller may then reuse the slots it found in one for the other.
func (s *Snapshot) SameSlots(o *Snapshot) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.slots == o.slots
}

// Len is the number of nodes with a view.
func (s *Snapshot) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Slots is one more than the highest slot (Slot) of this snapshot.
func (s *Snapshot) Slots() int {
	if s == nil {
		return 0
	}
	return len(s.chunks) << chunkBits
}

// All yields every node's view, in no particular order.
func (s *Snapshot) All() iter.Seq2[string, *NodeView] {
	return func(yield func(string, *NodeView) bool) {
		if s == nil {
			return
		}
		for node, i := range s.slots.of {
			if v := s.chunks[i>>chunkBits][i&(chunkSize-1)]; v != nil && !yield(node, v) {
				return
			}
		}
	}
}

// Snapshot returns every node's current view.
func (c *Cluster) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.snap != nil && len(c.changed) == 0:
	case c.snap != nil && len(c.changed) < len(c.reports)/4 && c.knowsAll():
		c.snap = c.patched()
	default:
		c.snap = c.rebuilt()
	}
	if len(c.changed) > changedKept {
		// A map keeps the room it once grew to: the first snapshot of
		// a 5000-node cluster left one of 5000 entries (0.26 MB) for the
		// node or two a cycle changes.
		c.changed = map[string]struct{}{}
	} else {
		clear(c.changed)
	}
	return c.snap
}

// changedKept is how many changed nodes a snapshot clears in place rather
// than making a new set: the one or two of a scheduling cycle, a few more.
const changedKept = 64

// knowsAll says whether every changed node has a slot in the last
// snapshot: a new node needs new slots.
func (c *Cluster) knowsAll() bool {
	for node := range c.changed {
		if _, ok := c.snap.slots.of[node]; !ok {
			return false
		}
	}
	return true
}

// patched is the last snapshot with the changed nodes' views replaced,
// their chunks copied first.
func (c *Cluster) patched() *Snapshot {
	old := c.snap
	s := &Snapshot{slots: old.slots, chunks: slices.Clone(old.chunks), n: len(c.reports)}
	for node := range c.changed {
		i := old.slots.of[node]
		k := i >> chunkBits
		if s.chunks[k] == old.chunks[k] {
			cp := *old.chunks[k]
			s.chunks[k] = &cp
		}
		var v *NodeView
		if _, ok := c.reports[node]; ok {
			v = c.view(node)
		}
		s.chunks[k][i&(chunkSize-1)] = v
	}
	return s
}

// rebuilt is a snapshot made anew: slots for the nodes there are now.
func (c *Cluster) rebuilt() *Snapshot {
	names := internNames(c.reports)
	s := &Snapshot{slots: &slots{of: make(map[string]int, len(names))}, n: len(names),
		chunks: make([]*[chunkSize]*NodeView, (len(names)+chunkSize-1)/chunkSize)}
	for i := range s.chunks {
		s.chunks[i] = new([chunkSize]*NodeView)
	}
	for i, name := range names {
		s.slots.of[name] = i
		s.chunks[i>>chunkBits][i&(chunkSize-1)] = c.view(name)
	}
	return s
}

// internNames copies the nodes' names into one string, so that the keys
// of a snapshot lie together: Filter and Score look a node up in it for
// every node in every cycle, and keys scattered over the heap, one cache
// miss each, cost more than the rest of the lookup.
func internNames(nodes map[string]*report) []string {
	var b strings.Builder
	names := make([]string, 0, len(nodes))
	for node := range nodes {
		names = append(names, node)
		b.WriteString(node)
	}
	all := b.String()
	off := 0
	for i, node := range names {
		names[i] = all[off : off+len(node)]
		off += len(node)
	}
	return names
}

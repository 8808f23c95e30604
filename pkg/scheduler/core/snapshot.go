package core

import (
	"maps"
	"strings"
)

// Snapshot returns every node's current view, by name: nodes with a
// NodeResourceTopology, readable or not. The map is shared and must not be
// changed; it stays valid while the cluster changes.
func (c *Cluster) Snapshot() map[string]*NodeView {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.snap != nil && len(c.changed) == 0:
		return c.snap
	case c.snap != nil && len(c.changed) < len(c.reports)/4:
		// A few nodes changed (a scheduling cycle changes one or two):
		// the last snapshot, those nodes replaced, is cheaper than a new one.
		snap := maps.Clone(c.snap)
		for node := range c.changed {
			if _, ok := c.reports[node]; !ok {
				delete(snap, node)
			} else if key, ok := c.names[node]; ok {
				snap[key] = c.view(node)
			} else {
				snap[node] = c.view(node)
			}
		}
		c.snap = snap
	default:
		c.names = internNames(c.reports)
		snap := make(map[string]*NodeView, len(c.reports))
		for node, key := range c.names {
			snap[key] = c.view(node)
		}
		c.snap = snap
	}
	clear(c.changed)
	return c.snap
}

// internNames copies the nodes' names into one string, so that the keys
// of a snapshot lie together: Filter and Score look a node up in it for
// every node in every cycle, and keys scattered over the heap, one cache
// miss each, cost more than the rest of the lookup.
func internNames(nodes map[string]*report) map[string]string {
	var b strings.Builder
	names := make([]string, 0, len(nodes))
	for node := range nodes {
		names = append(names, node)
		b.WriteString(node)
	}
	all := b.String()
	out := make(map[string]string, len(names))
	off := 0
	for _, node := range names {
		out[node] = all[off : off+len(node)]
		off += len(node)
	}
	return out
}

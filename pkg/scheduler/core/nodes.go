package core

// SetNodeCPUs records a node's CPU capacity (its status.capacity.cpu,
// the kubelet's count of online CPUs): a NodeResourceTopology that lists
// another number describes another machine (the node was replaced under
// the same name and its agent has not reported yet), and the node's view
// says so (Stale) instead of using it. It says, as SetNRT does, whether
// the node can take more than before.
func (c *Cluster) SetNodeCPUs(node string, cpus int64) (freed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.nodeCPUs[node]; ok && old == cpus {
		return false
	}
	before := c.view(node)
	c.nodeCPUs[node] = cpus
	c.dirty(node)
	after := c.view(node)
	return after.Err == nil && (before.Err != nil || after.freeMilli > before.freeMilli)
}

// DeleteNode forgets the allocations assumed on a node that left the
// cluster, and its capacity; the binding of their pods fails and they are
// scheduled again.
func (c *Cluster) DeleteNode(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.nodeCPUs, node)
	delete(c.tallies, node)
	for key, a := range c.assumed {
		if a.node == node {
			delete(c.assumed, key)
			c.unindex(node, key)
		}
	}
	c.dirty(node)
}

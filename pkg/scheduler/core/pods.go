package core

import (
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// SetPod records a pod. Only bound pods count (node != ""); decision is the
// scheduler's decision the pod carries (nil: none, or one that does not
// parse). A bound pod's allocation assumed by the scheduler is dropped: the
// pod itself now says what it holds. A pod with no decision that its
// node's report does not list holds nothing the state sees (most pods):
// it is recorded, and no view is rebuilt.
func (c *Cluster) SetPod(key, node string, decision *workload.Assignment) {
	c.SetPodMemory(key, node, decision, cpualloc.Memory{})
}

// SetPodMemory is SetPod for a pod that needs memory: while its node's
// report does not list it, its decision holds need on the NUMA nodes of
// its CPUs as cpualloc.Hold spreads it (or where the allocation assumed
// for it put it, when the pod is bound as assumed).
func (c *Cluster) SetPodMemory(key, node string, decision *workload.Assignment, need cpualloc.Memory) {
	if node == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var mem heldMem
	if old, had := c.pods[key]; had && old.node == node && old.decision.sameAs(decision) {
		mem = old.decision.heldMem()
	} else if a, ok := c.assumed[key]; decision != nil && !(ok && a.node == node && sameHolding(a.a, *decision)) {
		// Not the allocation assumed here, which holds its own memory.
		mem = c.decisionHolds(node, decision, need)
	}
	defer c.retally(key, node)()
	if c.boundAsAssumed(key, node, decision) {
		return
	}
	if a, ok := c.assumed[key]; ok {
		delete(c.assumed, key)
		c.unindex(a.node, key)
		c.dirty(a.node)
	}
	old, had := c.pods[key]
	if had && old.node == node && old.decision.sameAs(decision) {
		return // a status change: nothing the CPU state sees
	}
	was := had && c.counts(old.node, key, old)
	p := boundPod{node: node, decision: decisionOf(decision, mem)}
	c.pods[key] = p
	if had && old.node != node {
		c.unindex(old.node, key)
	}
	if was {
		c.dirty(old.node)
	}
	if c.counts(node, key, p) {
		c.index(node, key)
		c.dirty(node)
	}
}

// boundAsAssumed records the usual end of an allocation the scheduler
// assumed: the pod is bound where it was assumed, with the decision it
// was given, and its node's report does not list it yet. The node's CPUs
// are then held as before, so its view (and the placements it remembers)
// stays.
func (c *Cluster) boundAsAssumed(key, node string, decision *workload.Assignment) bool {
	a, ok := c.assumed[key]
	if !ok || a.node != node || decision == nil || !sameHolding(a.a, *decision) {
		return false
	}
	if _, had := c.pods[key]; had {
		return false
	}
	if r := c.reports[node]; r != nil && r.err == nil {
		if _, listed := r.holdings[key]; listed {
			return false
		}
	}
	delete(c.assumed, key)
	c.pods[key] = boundPod{node: node, decision: decisionOf(decision, a.mem)} // indexed on node already
	return true
}

// decisionHolds is what a decision found on a bound pod holds of need on
// its node: its CPUs' NUMA nodes, as the agent binds a decision's memory
// to them (the resource-status carries CPUs only), on the node's view.
func (c *Cluster) decisionHolds(node string, decision *workload.Assignment, need cpualloc.Memory) heldMem {
	if need == (cpualloc.Memory{}) {
		return nil
	}
	v := c.view(node)
	if v.Err != nil {
		return nil
	}
	return holdOn(v, v.machine.topo.NodesOf(decision.CPUs), need)
}

// counts says whether a bound pod holds CPUs in its node's view: it
// carries a decision, or the node's report lists it.
func (c *Cluster) counts(node, key string, p boundPod) bool {
	if p.decision != nil {
		return true
	}
	r := c.reports[node]
	if r == nil || r.err != nil {
		return false
	}
	_, listed := r.holdings[key]
	return listed
}

// DeletePod forgets a pod that is gone (deleted, or finished): its CPUs are
// free, whatever the node's report still says. It says whether the pod
// held CPUs the state counted (a decision, a report listing it, or an
// allocation assumed for it).
func (c *Cluster) DeletePod(key string) (freed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.retally(key, "")()
	if p, ok := c.pods[key]; ok {
		freed = c.counts(p.node, key, p)
		delete(c.pods, key)
		c.unindex(p.node, key)
		if freed {
			c.dirty(p.node)
		}
	}
	if a, ok := c.assumed[key]; ok {
		delete(c.assumed, key)
		c.unindex(a.node, key)
		c.dirty(a.node)
		freed = true
	}
	return freed
}

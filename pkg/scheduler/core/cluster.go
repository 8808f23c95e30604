package core

import (
	"slices"
	"sync"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// Cluster is the CPU state of every node. Its inputs are events (a
// NodeResourceTopology or a pod changed or went away, the scheduler assumed
// or forgot an allocation); Snapshot hands out immutable views. Safe for
// concurrent use.
type Cluster struct {
	mu       sync.Mutex
	reports  map[string]*report  // by node
	machines map[string]*machine // by fingerprint, shared by nodes
	pods     map[string]boundPod // by namespace/pod, bound pods only
	assumed  map[string]assumed  // by namespace/pod
	// byNode are the keys of the pods and assumed allocations that hold
	// CPUs on each node: a few a node, a slice rather than a map (a map
	// of two keys is about 250 bytes, on every node).
	byNode   map[string][]string
	views    map[string]*NodeView // current; a missing entry is made anew from the tally
	tallies  map[string]*tally    // by node with a usable report; a missing one is made from every holding
	snap     *Snapshot            // the last snapshot handed out
	changed  map[string]struct{}  // nodes changed since snap
	nodeCPUs map[string]int64     // the nodes' CPU capacities (SetNodeCPUs)
	frees    freeTables           // the reports' and views' free memory, each table once
	texts    reportTexts          // the reports' texts read last (its own lock: read before mu)
}

// boundPod is a pod bound to a node and the scheduler's decision on it, if
// it carries a valid one.
type boundPod struct {
	node string
	// decision is nil for none. What it holds of memory is kept in it:
	// most pods have none, and every bound pod is an entry here.
	decision *keptDecision
}

type assumed struct {
	node string
	a    workload.Assignment
	mem  heldMem // as boundPod's
}

// NewCluster returns an empty cluster.
func NewCluster() *Cluster {
	return &Cluster{reports: map[string]*report{}, machines: map[string]*machine{}, pods: map[string]boundPod{},
		assumed: map[string]assumed{}, byNode: map[string][]string{}, views: map[string]*NodeView{},
		tallies: map[string]*tally{},
		changed: map[string]struct{}{}, nodeCPUs: map[string]int64{}}
}

// SetNRT reads a node's NodeResourceTopology (node is its name). One that
// cannot be read makes the node unusable, with the reason, until a good one
// arrives. It says whether the node can take more than before (usable now,
// or more CPU or memory free, or more CPUs movable): pods waiting for room
// are worth trying again.
func (c *Cluster) SetNRT(node string, obj *nrt.Object) (freed bool) {
	build, key, r, err := readNRTWith(obj, &c.texts)
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.view(node)
	defer func() {
		after := c.view(node)
		freed = after.Err == nil && (before.Err != nil || after.freeMilli > before.freeMilli || moreMemory(before.free, after.free) ||
			moreMovable(before.movable, after.movable))
	}()
	old := c.reports[node]
	if err != nil {
		r = report{err: unfit(BadTopology, "NodeResourceTopology %s: %v", node, err)}
	} else if m := c.machines[key]; m != nil {
		r.machine = m
	} else if m, err := newMachine(key, build); err != nil {
		r = report{err: unfit(BadTopology, "NodeResourceTopology %s: %v", node, err)}
	} else {
		r.machine = m
		c.machines[key] = m
	}
	if r.machine != nil {
		r.machine.refs++
		r.free = c.frees.intern(r.free)
		r.reserved = r.machine.internReserved(r.reserved)
	}
	c.release(old)
	done := c.retallyReport(node, old, &r)
	c.reports[node] = &r
	done()
	c.dirty(node)
	return false // set by the deferred comparison
}

// ReportError is why the node's NodeResourceTopology was refused, nil
// when it was read (or there is none): for the plugin to log.
func (c *Cluster) ReportError(node string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.reports[node]; r != nil && r.err != nil {
		return r.err
	}
	return nil
}

// DeleteNRT forgets a node's NodeResourceTopology: the node takes no pods
// with CPUs of their own until one is published again.
func (c *Cluster) DeleteNRT(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.release(c.reports[node])
	delete(c.reports, node)
	delete(c.tallies, node)
	c.dirty(node)
}

func (c *Cluster) release(r *report) {
	if r == nil || r.machine == nil {
		return
	}
	if r.machine.refs--; r.machine.refs == 0 {
		delete(c.machines, r.machine.key)
	}
}

func (c *Cluster) index(node, key string) {
	if !slices.Contains(c.byNode[node], key) {
		c.byNode[node] = append(c.byNode[node], key)
	}
}

// unindex drops key from node's index unless it is still there as a bound
// pod or an assumed allocation.
func (c *Cluster) unindex(node, key string) {
	if p, ok := c.pods[key]; ok && p.node == node {
		return
	}
	if a, ok := c.assumed[key]; ok && a.node == node {
		return
	}
	keys := c.byNode[node]
	if i := slices.Index(keys, key); i >= 0 {
		keys[i] = keys[len(keys)-1]
		keys = keys[:len(keys)-1]
	}
	if len(keys) == 0 {
		delete(c.byNode, node)
	} else {
		c.byNode[node] = keys
	}
}

func (c *Cluster) dirty(node string) {
	delete(c.views, node)
	c.changed[node] = struct{}{}
}

// view returns the node's current view, making it if something changed.
func (c *Cluster) view(node string) *NodeView {
	if v, ok := c.views[node]; ok {
		return v
	}
	var v *NodeView
	switch r := c.reports[node]; {
	case r == nil:
		v = &NodeView{Name: node, Err: unfit(NoTopology, "no NodeResourceTopology named %s", node)}
	case r.err != nil:
		v = &NodeView{Name: node, Err: r.err}
	default:
		t := c.tallyOf(node, r)
		v = t.view(node, r)
		if len(t.mem) > 0 {
			v.free = c.frees.intern(v.free) // not the report's: less the in-cycle holdings
		}
		if t.n == 0 {
			// Nothing held: the tally is newTally's, made again when a
			// holding comes (tallyOf). Most nodes of a large cluster hold
			// nothing, and a tally kept for each was about 340 bytes a
			// node, 1.7 MB of live heap at 5000 nodes.
			delete(c.tallies, node)
		}
	}
	if cpus, ok := c.nodeCPUs[node]; ok && v.Err == nil && cpus > 0 && cpus != int64(len(v.machine.topo.CPUs)) {
		v = &NodeView{Name: node, Err: staleErr(len(v.machine.topo.CPUs), cpus)}
	}
	c.views[node] = v
	return v
}

// Assume records the allocation of a pod being bound to node (the
// framework's Reserve). seen is the view the placement was made on: when
// the node changed since, the pod is placed again on the current state, so
// that two pods never get the same exclusive CPUs. It returns the
// placement in force.
func (c *Cluster) Assume(key, node string, seen *NodeView, p Placement, req Request) (Placement, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.view(node)
	if cur != seen {
		var err error
		if p, err = Place(cur, 0, req); err != nil {
			return Placement{}, err
		}
	}
	mem := holdOn(cur, p.Result.MemNodes, req.Memory)
	defer c.retally(key, node)()
	if old, ok := c.assumed[key]; ok {
		delete(c.assumed, key)
		c.unindex(old.node, key)
		c.dirty(old.node)
	}
	c.assumed[key] = assumed{node: node, a: workload.Assignment{CPUs: p.Result.CPUs, Policy: p.Result.Policy, RequestMilli: req.RequestMilli},
		mem: mem}
	c.index(node, key)
	c.dirty(node)
	return p, nil
}

// Forget drops the allocation assumed for a pod on node (the framework's
// Unreserve: the binding failed).
func (c *Cluster) Forget(key, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumed[key]; ok && a.node == node {
		defer c.retally(key, node)()
		delete(c.assumed, key)
		c.unindex(node, key)
		c.dirty(node)
	}
}

// Assumed says whether an allocation is assumed for the pod (for tests and
// status).
func (c *Cluster) Assumed(key string) (node string, a workload.Assignment, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.assumed[key]
	return x.node, x.a, ok
}

package core

import (
	"maps"
	"slices"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// tally is one node's holdings summed up, and kept up to date as they
// come and go: a holding added or removed changes the words of its CPUs,
// and a new view copies the sums (three words of bits for a 192-CPU
// machine). So the view of a node that changed costs what changed, not
// what the node holds: rebuilding it from every pod it held was, on a
// packed node, the largest part of a cycle's snapshot. A tally is made
// whole only when the node's machine or reserved CPUs change, or the
// node goes.
type tally struct {
	// excl counts, by CPU id, the exclusive holdings that list it, in a
	// byte: a CPU is held by one pod, or two or three for a moment (the
	// report's, the decision's, the assumed one), and four bytes a CPU
	// were a third of the tallies at a thousand nodes. Decisions come
	// from pods' annotations, so nothing bounds how many claim one CPU
	// below the number of pods: a count of exclOver or more is in over.
	excl  []uint8
	over  map[int]uint32 // by CPU id: the counts of exclOver and more; nil for none
	bits  []uint64       // the CPUs with a count, as bits
	burst map[int]int64  // by CPU id: the static-burst shares on it, 0 left out; nil for none
	n     int            // holdings
	free  int64          // as NodeView.freeMilli
	alloc int64          // as NodeView.allocMilli
	// allocatable are the node's CPUs that count towards free: online,
	// not reserved, not isolated.
	allocatable []uint64
	empty       *memo // the memo of this machine's empty views with these reserved CPUs
	// mem is, by NUMA node in node order, the memory the in-cycle
	// holdings hold (the ones the report does not list yet): nil or empty
	// for none. A slice of a node or two, not a map (about 380 bytes a
	// node as a map).
	mem heldMem
}

// newTally is the tally of a node with a usable report and no holdings.
func newTally(r *report) *tally {
	t := &tally{empty: r.machine.emptyMemo(r.reserved)}
	topo := r.machine.topo
	// Sized once to the highest CPU id: grown CPU by CPU, the doubling
	// left a 192-CPU node's counts at 256 entries, a third of them unused
	// on every node.
	if len(topo.CPUs) > 0 {
		t.grow(slices.MaxFunc(topo.CPUs, func(a, b topology.CPU) int { return a.ID - b.ID }).ID)
	}
	for _, c := range topo.CPUs {
		if r.reserved.Contains(c.ID) || topo.Isolated.Contains(c.ID) {
			continue
		}
		t.grow(c.ID)
		t.allocatable[c.ID>>6] |= 1 << (c.ID & 63)
		t.alloc += 1000
		t.free += 1000
	}
	return t
}

// grow makes room for CPU id.
func (t *tally) grow(id int) {
	if id < len(t.excl) {
		return
	}
	n := max(id+1, 2*len(t.excl))
	t.excl = append(t.excl, make([]uint8, n-len(t.excl))...)
	words := (n + 63) >> 6
	t.bits = append(t.bits, make([]uint64, words-len(t.bits))...)
	t.allocatable = append(t.allocatable, make([]uint64, words-len(t.allocatable))...)
}

// freeOf is what CPU id adds to free.
func (t *tally) freeOf(id int) int64 {
	if t.allocatable[id>>6]&(1<<(id&63)) == 0 || t.excl[id] > 0 {
		return 0
	}
	return max(0, 1000-t.burst[id])
}

// add counts h (sign 1) or stops counting it (sign -1), and mem, the
// memory it holds by node, when the report does not count it yet. CPU ids
// outside 0..topology.MaxCPUID are ignored: no parsed list has them.
func (t *tally) add(h workload.Assignment, mem heldMem, sign int) {
	t.addMem(mem, sign)
	t.n += sign
	var share int64
	if h.Policy == cpualloc.StaticBurst {
		n := h.CPUs.Size()
		if n == 0 {
			return
		}
		m := h.RequestMilli
		if m == 0 {
			m = int64(n) * 1000
		}
		share = cpualloc.BurstShare(m, n)
	}
	for _, id := range h.CPUs.UnsortedList() {
		if id < 0 || id > topology.MaxCPUID {
			continue
		}
		t.grow(id)
		before := t.freeOf(id)
		switch {
		case h.Policy == cpualloc.StaticBurst:
			if m := t.burst[id] + int64(sign)*share; m != 0 {
				if t.burst == nil {
					t.burst = map[int]int64{}
				}
				t.burst[id] = m
			} else {
				delete(t.burst, id)
			}
		case sign > 0:
			t.setHolders(id, t.holders(id)+1)
			t.bits[id>>6] |= 1 << (id & 63)
		default:
			n := t.holders(id) - 1
			t.setHolders(id, n)
			if n == 0 {
				t.bits[id>>6] &^= 1 << (id & 63)
			}
		}
		t.free += t.freeOf(id) - before
	}
}

// view is the node's view with these sums; the view keeps copies. Its
// free memory is the report's less the in-cycle holdings'. An empty
// node's view shares the machine's memo of empty views only when its
// memory is whole too (or not counted), so that a placement remembered
// there fits every view that shares it.
func (t *tally) view(name string, r *report) *NodeView {
	v := &NodeView{Name: name, Reserved: r.reserved, Holdings: t.n, Heartbeat: r.heartbeat, machine: r.machine,
		freeMilli: t.free, allocMilli: t.alloc, bits: slices.Clone(t.bits), memo: t.empty, free: freeLess(r.free, t.mem),
		movable: r.movable, devices: r.devices}
	if len(t.burst) > 0 {
		v.burst = maps.Clone(t.burst)
	}
	// A view counting movable CPUs places differently from the machine's
	// other empty nodes: it keeps its own memo.
	if t.n != 0 || (r.free != nil && !r.whole) || len(r.movable) > 0 {
		v.memo = &memo{}
	}
	return v
}

// held is what key holds on node: up to three holdings (the one the
// node's report lists, the pod's decision when it says otherwise, the
// allocation assumed for it); n says how many.
type held struct {
	h   [3]workload.Assignment
	mem [3]heldMem // what each holds of memory, by node, where the report does not count it
	n   int
}

func (c *Cluster) heldOn(node, key string) held {
	var out held
	r := c.reports[node]
	if r == nil || r.err != nil {
		return out
	}
	p, bound := c.pods[key]
	bound = bound && p.node == node
	h, listed := r.holdings[key]
	if listed && bound {
		out.h[out.n], out.n = h, out.n+1
	}
	if bound && p.decision != nil && (!listed || !p.decision.sameHolding(h)) {
		out.h[out.n], out.mem[out.n], out.n = p.decision.holding(), p.decision.mem, out.n+1
	}
	if a, ok := c.assumed[key]; ok && a.node == node {
		out.h[out.n], out.mem[out.n], out.n = a.a, a.mem, out.n+1
	}
	return out
}

func (a held) same(b held) bool {
	if a.n != b.n {
		return false
	}
	for i := range a.n {
		if !sameHolding(a.h[i], b.h[i]) || !slices.Equal(a.mem[i], b.mem[i]) {
			return false
		}
	}
	return true
}

// count adds (sign 1) or takes (sign -1) every holding of a to t.
func (a held) count(t *tally, sign int) {
	for i := range a.n {
		t.add(a.h[i], a.mem[i], sign)
	}
}

// keyNodes are the nodes key may hold CPUs on: its pod's, its assumed
// allocation's, and node.
func (c *Cluster) keyNodes(key, node string) [3]string {
	return [3]string{node, c.pods[key].node, c.assumed[key].node}
}

// retally returns what to call once a change to key is made: it brings
// the tallies of the nodes key held CPUs on, before or after, up to date.
// A tally made during the change (by a view the change asked for) is
// dropped, to be made again from every holding.
func (c *Cluster) retally(key, node string) func() {
	nodes := c.keyNodes(key, node)
	var before [3]held
	var had [3]*tally
	for i, n := range nodes {
		if had[i] = c.tallies[n]; had[i] != nil {
			before[i] = c.heldOn(n, key)
		}
	}
	return func() {
		after := c.keyNodes(key, node)
		all := append(nodes[:], after[:]...)
		for j, n := range all {
			t := c.tallies[n]
			if t == nil || slices.Contains(all[:j], n) {
				continue // no tally, or done
			}
			i := slices.Index(nodes[:], n)
			if i < 0 || had[i] != t {
				delete(c.tallies, n) // made during the change
				continue
			}
			old := before[i]
			now := c.heldOn(n, key)
			if old.same(now) {
				continue
			}
			old.count(t, -1)
			now.count(t, 1)
		}
	}
}

// tallyOf is the node's tally, made from every holding when it has none.
// r is the node's report, usable.
func (c *Cluster) tallyOf(node string, r *report) *tally {
	if t := c.tallies[node]; t != nil {
		return t
	}
	t := newTally(r)
	for key, h := range r.holdings {
		// A pod the report lists but that is gone is free: the agent
		// will release it.
		if p, ok := c.pods[key]; ok && p.node == node {
			t.add(h, nil, 1)
		}
	}
	for _, key := range c.byNode[node] {
		if p, ok := c.pods[key]; ok && p.node == node && p.decision != nil {
			if h, listed := r.holdings[key]; !listed || !p.decision.sameHolding(h) {
				t.add(p.decision.holding(), p.decision.mem, 1)
			}
		}
		if a, ok := c.assumed[key]; ok && a.node == node {
			t.add(a.a, a.mem, 1)
		}
	}
	c.tallies[node] = t
	return t
}

// retallyReport returns what to call once node's report is replaced by
// r: when the machine and reserved CPUs stay, it brings the tally up to
// date with the holdings the two reports list differently (the agent
// rewrites its report as pods come and go, and most entries stay);
// otherwise it drops the tally.
func (c *Cluster) retallyReport(node string, old, r *report) func() {
	t := c.tallies[node]
	if t == nil || old == nil || old.err != nil || r.err != nil || old.machine != r.machine || !old.reserved.Equals(r.reserved) {
		delete(c.tallies, node)
		return func() {}
	}
	var keys []string
	for key, h := range old.holdings {
		if n, ok := r.holdings[key]; !ok || !sameHolding(h, n) {
			keys = append(keys, key)
		}
	}
	for key := range r.holdings {
		if _, ok := old.holdings[key]; !ok {
			keys = append(keys, key)
		}
	}
	before := make([]held, len(keys))
	for i, key := range keys {
		before[i] = c.heldOn(node, key)
	}
	return func() {
		for i, key := range keys {
			now := c.heldOn(node, key)
			if before[i].same(now) {
				continue
			}
			before[i].count(t, -1)
			now.count(t, 1)
		}
	}
}

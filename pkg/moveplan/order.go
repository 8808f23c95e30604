package moveplan

import (
	"cmp"
	"slices"

	"github.com/locus-project/locus/pkg/cpualloc"
)

// tryAllOrders tries the moves of the candidates mask names in every order
// (largest first only, for more than MaxOrdered) and keeps the cheapest
// order that works: orders differ in where each workload lands, so in the
// bytes left behind and in whether the later ones find room.
func (p *planner) tryAllOrders(tg target, mask uint32) (Plan, bool) {
	var chosen []int
	for i, h := range tg.candidates {
		if mask&(1<<i) != 0 {
			chosen = append(chosen, h)
		}
	}
	slices.SortStableFunc(chosen, func(a, b int) int {
		return cmp.Compare(p.in.Holdings[b].CPUs.Size(), p.in.Holdings[a].CPUs.Size())
	})
	var best Plan
	found := false
	try := func(order []int) {
		if plan, ok := p.apply(tg, order); ok && (!found || plan.Cost.Less(best.Cost)) {
			best, found = plan, true
		}
	}
	if len(chosen) > MaxOrdered {
		try(chosen)
		return best, found
	}
	permute(chosen, 0, try)
	return best, found
}

// permute calls f with every order of s (s is reordered in place and put back).
func permute(s []int, k int, f func([]int)) {
	if k == len(s) {
		f(s)
		return
	}
	for i := k; i < len(s); i++ {
		s[k], s[i] = s[i], s[k]
		permute(s, k+1, f)
		s[k], s[i] = s[i], s[k]
	}
}

// apply moves the holdings of order out of tg's nodes one after the other,
// each placed by the allocator on the CPUs free at its turn, then places
// the request on tg's nodes; ok is false when a workload finds no room keeping its shape
// or the request still does not get its usual placement.
func (p *planner) apply(tg target, order []int) (Plan, bool) {
	st := p.start
	away := p.in.Reserved.Union(tg.cpus)
	plan := Plan{Moves: make([]Move, 0, len(order))}
	for _, i := range order {
		h := p.in.Holdings[i]
		req := p.shapeOf(h)
		p.placed++
		res, err := p.alloc.Allocate(st, away, req)
		if err != nil || !p.keepsShape(h, res) {
			return Plan{}, false
		}
		st = st.With(res, req)
		st.Exclusive = st.Exclusive.Difference(h.CPUs)
		if st.Free != nil {
			st.Free = cpualloc.GiveBack(st.Free, h.MemHeld)
		}
		mv := Move{Workload: h.Name, From: h.CPUs, To: res.CPUs, FromNodes: p.nodesOf(h.CPUs),
			ToNodes: res.NUMANodes, MemNodes: res.MemNodes}
		for node, b := range h.Resident {
			if !slices.Contains(res.MemNodes, node) {
				mv.Bytes = addSat(mv.Bytes, b)
			}
		}
		plan.Moves = append(plan.Moves, mv)
		plan.Cost.CPUs += h.CPUs.Size()
		plan.Cost.Bytes = addSat(plan.Cost.Bytes, mv.Bytes)
		plan.Cost.Workloads++
	}
	// The request goes to the group the moves freed: the CPUs outside it
	// count as taken, so that the plan's cost is that of freeing the group.
	st.Exclusive = st.Exclusive.Union(p.t.CPUSet().Difference(tg.cpus))
	p.placed++
	res, err := p.alloc.Allocate(st, p.in.Reserved, p.in.Request)
	if err != nil || !p.usual(res) {
		return Plan{}, false
	}
	plan.Result = res
	return plan, true
}

// shapeOf is the request that re-places h: its count, its policy, whole
// cores when it holds whole cores, its memory.
func (p *planner) shapeOf(h Holding) cpualloc.Request {
	req := cpualloc.Request{CPUs: h.CPUs.Size(), Policy: h.Policy, Memory: h.Memory}
	if p.wholeCores(h.CPUs) {
		req.Policy = cpualloc.FullPCPUs
	}
	return req
}

// keepsShape says whether res spans no more nodes than h does now.
func (p *planner) keepsShape(h Holding, res cpualloc.Result) bool {
	nodes := len(p.nodesOf(h.CPUs))
	if len(res.NUMANodes) > nodes {
		return false
	}
	return p.in.State.Free == nil || h.Memory.IsZero() || len(res.MemNodes) <= max(nodes, heldNodes(h.MemHeld))
}

func heldNodes(held map[int]cpualloc.Memory) int {
	n := 0
	for _, m := range held {
		if !m.IsZero() {
			n++
		}
	}
	return n
}

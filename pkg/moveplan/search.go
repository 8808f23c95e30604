package moveplan

import (
	"cmp"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
)

// MaxSubsets bounds the sets of moves kept for trial over all target groups.
const MaxSubsets = 1 << 18

// trial is one set of moves to try: the candidates of target group domain
// named by the bits of mask, with the least its cost can be.
type trial struct {
	domain int
	mask   uint32
	lower  Cost
}

// target is a group of nodes the request could go to once the movable
// workloads on it have moved away.
type target struct {
	nodes      []int
	cpus       cpuset.CPUSet
	candidates []int // indices into Input.Holdings
}

// search tries the sets of moves cheapest first (by the least each can cost)
// and keeps the cheapest that works.
func (p *planner) search() (Plan, error) {
	targets := p.targets()
	trials, most := p.trials(targets)
	if len(trials) == 0 {
		return Plan{}, p.whyNone(targets, most)
	}
	var best *Plan
	for _, tr := range trials {
		if best != nil && !tr.lower.Less(best.Cost) {
			break
		}
		if p.placed >= MaxPlacements {
			p.bound = true
			break
		}
		if plan, ok := p.tryAllOrders(targets[tr.domain], tr.mask); ok && (best == nil || plan.Cost.Less(best.Cost)) {
			best = &plan
		}
	}
	if best == nil {
		if p.bound {
			return Plan{}, noMovesf("no moves found within the search's bounds (%d placements, %d groups of nodes, %d workloads a group)",
				MaxPlacements, MaxDomains, MaxCandidates)
		}
		return Plan{}, noMovesf("the movable workloads on every group of %d node(s) that could free %d CPUs find no room on the other nodes keeping their CPU count, cores and nodes",
			p.span, p.in.Request.CPUs)
	}
	best.Bounded = p.bound
	return *best, nil
}

// targets is each group of nodes with the movable workloads holding CPUs
// there (the fewest CPUs first, at most MaxCandidates).
func (p *planner) targets() []target {
	var out []target
	for _, nodes := range p.domains() {
		tg := target{nodes: nodes, cpus: p.cpusOf(nodes)}
		for i, h := range p.in.Holdings {
			if h.Movable && h.Policy != cpualloc.StaticBurst && !h.CPUs.Intersection(tg.cpus).IsEmpty() {
				tg.candidates = append(tg.candidates, i)
			}
		}
		slices.SortStableFunc(tg.candidates, func(a, b int) int {
			return cmp.Compare(p.in.Holdings[a].CPUs.Size(), p.in.Holdings[b].CPUs.Size())
		})
		if len(tg.candidates) > MaxCandidates {
			tg.candidates, p.bound = tg.candidates[:MaxCandidates], true
		}
		out = append(out, tg)
	}
	return out
}

// trials is every set of candidates that would leave its group enough
// usable CPUs and could find room outside it, sorted by the least each can
// cost; most is the most usable CPUs any group could have.
func (p *planner) trials(targets []target) ([]trial, int) {
	var out []trial
	most := 0
	for d, tg := range targets {
		free := p.usable(tg.cpus).Size()
		outside := p.usable(p.t.CPUSet().Difference(tg.cpus)).Size()
		n := len(tg.candidates)
		// each candidate's CPUs on the group, CPUs and bytes there, summed per
		// subset below without touching a set again.
		inGroup, size, bytes := make([]int, n), make([]int, n), make([]uint64, n)
		for i, hi := range tg.candidates {
			h := p.in.Holdings[hi]
			inGroup[i], size[i] = h.CPUs.Intersection(tg.cpus).Size(), h.CPUs.Size()
			if p.in.State.Free != nil && !h.Memory.IsZero() {
				continue // its memory may spill back onto the group: its bytes there may stay
			}
			for _, node := range tg.nodes {
				bytes[i] = addSat(bytes[i], h.Resident[node])
			}
		}
		for mask := uint32(1); mask < 1<<n; mask++ {
			if len(out) >= MaxSubsets {
				p.bound = true
				break
			}
			// A moved workload's CPUs outside the group are free for the
			// moves after it.
			freed, left, low := 0, outside, Cost{}
			for i := range n {
				if mask&(1<<i) != 0 {
					freed += inGroup[i]
					left += size[i] - inGroup[i]
					low.CPUs += size[i]
					low.Workloads++
					low.Bytes = addSat(low.Bytes, bytes[i])
				}
			}
			most = max(most, free+freed)
			if free+freed >= p.in.Request.CPUs && low.CPUs <= left {
				out = append(out, trial{domain: d, mask: mask, lower: low})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b trial) int {
		if a.lower.Less(b.lower) {
			return -1
		}
		if b.lower.Less(a.lower) {
			return 1
		}
		return 0
	})
	return out, most
}

func (p *planner) whyNone(targets []target, most int) error {
	movable := 0
	for _, tg := range targets {
		movable += len(tg.candidates)
	}
	if movable == 0 {
		return noMovesf("no movable workload holds CPUs on a group of %d node(s) the request could use", p.span)
	}
	if p.bound {
		return noMovesf("no moves found within the search's bounds (%d groups of nodes, the %d movable workloads with the fewest CPUs on each): at most %d free CPUs on a group of %d node(s), %d asked",
			MaxDomains, MaxCandidates, most, p.span, p.in.Request.CPUs)
	}
	if most < p.in.Request.CPUs {
		return noMovesf("even with every movable workload moved, no group of %d node(s) has %d free CPUs (at most %d)",
			p.span, p.in.Request.CPUs, most)
	}
	return noMovesf("the movable workloads that would free %d CPUs on a group of %d node(s) have no room on the other nodes",
		p.in.Request.CPUs, p.span)
}

func addSat(a, b uint64) uint64 {
	if a > ^uint64(0)-b {
		return ^uint64(0)
	}
	return a + b
}

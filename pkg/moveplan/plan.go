package moveplan

import (
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// planner is one plan's fixed inputs and its running count of placements.
type planner struct {
	t        *topology.Topology
	alloc    *cpualloc.Allocator
	in       Input
	start    cpualloc.State // in.State with every holding's CPUs taken
	nodeOf   map[int]int    // CPU id to NUMA node id
	coreOf   map[int][2]int // CPU id to (socket, core)
	siblings map[[2]int]int // (socket, core) to its number of online threads
	// span and policy are the request's usual placement: what the allocator
	// gives it on the machine with nothing held.
	span   int
	policy cpualloc.Policy
	placed int // allocator calls made
	bound  bool
}

// Make plans the cheapest moves (see Cost) after which the allocator places
// in.Request as it would on a machine with nothing held: on as few nodes,
// with the same rule (whole cores when those were its to have). No moves
// when it fits so already. Only movable holdings with CPUs on the target
// nodes move, each to CPUs free at its turn, outside those nodes, keeping
// its CPU count, its whole cores and at most as many nodes as it had; its
// memory follows its CPUs and must fit in State.Free when that is
// accounted. Errors match ErrInvalid or ErrNoMoves, or are the allocator's
// for a request it refuses on an empty machine.
func Make(t *topology.Topology, in Input) (Plan, error) {
	p, err := newPlanner(t, in)
	if err != nil {
		return Plan{}, err
	}
	if res, err := p.alloc.Allocate(p.start, in.Reserved, in.Request); err == nil && p.usual(res) {
		return Plan{Result: res}, nil
	}
	return p.search()
}

func newPlanner(t *topology.Topology, in Input) (*planner, error) {
	alloc, err := cpualloc.NewAllocator(t)
	if err != nil {
		return nil, err
	}
	if in.Request.Policy == cpualloc.StaticBurst {
		return nil, invalidf("request: moves make room for exclusive CPUs; %s shares them", cpualloc.StaticBurst)
	}
	if len(in.Holdings) > MaxHoldings {
		return nil, invalidf("holdings: %d, at most %d", len(in.Holdings), MaxHoldings)
	}
	p := &planner{t: t, alloc: alloc, in: in, nodeOf: map[int]int{}, coreOf: map[int][2]int{}, siblings: map[[2]int]int{}}
	for _, c := range t.CPUs {
		p.nodeOf[c.ID] = c.NUMA
		k := [2]int{c.Socket, c.Core}
		p.coreOf[c.ID] = k
		p.siblings[k]++
	}
	if err := p.checkHoldings(); err != nil {
		return nil, err
	}
	ideal, err := alloc.Allocate(cpualloc.State{}, in.Reserved, in.Request)
	if err != nil {
		return nil, err
	}
	p.span, p.policy = len(ideal.NUMANodes), ideal.Policy
	return p, nil
}

// checkHoldings refuses holdings that repeat a name, overlap, hold nothing
// or name CPUs the machine lacks, and counts their CPUs taken.
func (p *planner) checkHoldings() error {
	p.start = p.in.State
	seen := make(map[string]bool, len(p.in.Holdings))
	var all cpuset.CPUSet
	online := p.t.CPUSet()
	for _, h := range p.in.Holdings {
		switch {
		case h.Name == "":
			return invalidf("holding with CPUs %s has no name", h.CPUs)
		case seen[h.Name]:
			return invalidf("holding %q named twice", h.Name)
		case h.CPUs.IsEmpty():
			return invalidf("holding %q holds no CPUs", h.Name)
		case !h.CPUs.IsSubsetOf(online):
			return invalidf("holding %q: CPUs %s are not on this machine", h.Name, h.CPUs.Difference(online))
		case !all.Intersection(h.CPUs).IsEmpty():
			return invalidf("holding %q: CPUs %s are another holding's", h.Name, all.Intersection(h.CPUs))
		}
		seen[h.Name] = true
		all = all.Union(h.CPUs)
	}
	p.start.Exclusive = p.start.Exclusive.Union(all)
	return nil
}

// usual says whether res is the request's usual placement.
func (p *planner) usual(res cpualloc.Result) bool {
	if len(res.NUMANodes) > p.span || res.Policy != p.policy {
		return false
	}
	return p.in.State.Free == nil || p.in.Request.Memory.IsZero() || len(res.MemNodes) <= p.span
}

// nodesOf is the sorted NUMA nodes of cpus.
func (p *planner) nodesOf(cpus cpuset.CPUSet) []int {
	var out []int
	for _, id := range cpus.UnsortedList() {
		out = append(out, p.nodeOf[id])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// wholeCores says whether cpus holds every online thread of each of its cores.
func (p *planner) wholeCores(cpus cpuset.CPUSet) bool {
	count := map[[2]int]int{}
	for _, id := range cpus.UnsortedList() {
		count[p.coreOf[id]]++
	}
	for k, n := range count {
		if n != p.siblings[k] {
			return false
		}
	}
	return true
}

// domains is every group of p.span nodes with CPUs, those with the most
// free CPUs first (then by ids), at most MaxDomains.
func (p *planner) domains() [][]int {
	var ids []int
	for _, n := range p.t.Nodes {
		if !n.CPUs.IsEmpty() {
			ids = append(ids, n.ID)
		}
	}
	var out [][]int
	var walk func(from int, cur []int)
	walk = func(from int, cur []int) {
		if len(cur) == p.span {
			out = append(out, slices.Clone(cur))
			return
		}
		for i := from; i < len(ids) && len(out) < 4*MaxDomains; i++ {
			walk(i+1, append(cur, ids[i]))
		}
	}
	walk(0, nil)
	free := make([]int, len(out))
	for i, d := range out {
		free[i] = p.usable(p.cpusOf(d)).Size()
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return free[b] - free[a] })
	sorted := make([][]int, 0, min(len(out), MaxDomains))
	for _, i := range order[:min(len(order), MaxDomains)] {
		sorted = append(sorted, out[i])
	}
	if len(out) > MaxDomains {
		p.bound = true
	}
	return sorted
}

// cpusOf is the CPUs of nodes.
func (p *planner) cpusOf(nodes []int) cpuset.CPUSet {
	var out cpuset.CPUSet
	for _, id := range nodes {
		if n, ok := p.t.Node(id); ok {
			out = out.Union(n.CPUs)
		}
	}
	return out
}

// usable is what of cpus the request could take on the starting state.
func (p *planner) usable(cpus cpuset.CPUSet) cpuset.CPUSet {
	out := cpus.Difference(p.start.Exclusive.CPUSet())
	if !p.in.Request.UseReserved {
		out = out.Difference(p.in.Reserved).Difference(p.t.Isolated)
	}
	return out
}

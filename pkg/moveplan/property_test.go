package moveplan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// smallMachines are the 2-node machines of 8 to 16 CPUs the property runs on.
var smallMachines = []fixture.Shape{
	twoNodes16,
	{Name: "2n-2c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 2, ThreadsPerCore: 2,
		Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 * gib},
	{Name: "2n-3c-ht-split", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 3, ThreadsPerCore: 2,
		Siblings: fixture.SiblingsSplit, MemoryPerNode: 8 * gib},
	{Name: "2n-4c", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4, ThreadsPerCore: 1,
		Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 * gib},
}

// randomInput fills topo with random holdings, placed by the allocator as
// they would have been, some movable, and asks for a random count.
func randomInput(r *rand.Rand, topo *topology.Topology) Input {
	var in Input
	var st cpualloc.State
	total := len(topo.CPUs)
	policies := []cpualloc.Policy{"", cpualloc.FullPCPUs, cpualloc.SpreadByPCPUs, cpualloc.DistributeAcrossNUMA}
	strategies := []cpualloc.NUMAStrategy{cpualloc.MostAllocated, cpualloc.LeastAllocated}
	want := total * (3 + r.IntN(4)) / 10
	memory := r.IntN(2) == 0 // half the cases account memory, 4 GiB a node
	if memory {
		st.Free = map[int]cpualloc.Memory{}
		for _, n := range topo.Nodes {
			st.Free[n.ID] = cpualloc.Memory{Bytes: 4 * gib}
		}
	}
	for tries := 0; st.Exclusive.Size() < want && tries < 20; tries++ {
		req := cpualloc.Request{CPUs: 1 + r.IntN(4), Policy: policies[r.IntN(len(policies))],
			NUMAStrategy: strategies[r.IntN(2)]}
		if memory {
			req.Memory.Bytes = uint64(r.IntN(3)) * gib
		}
		res, err := cpualloc.Allocate(topo, st, cpuset.New(), req)
		if err != nil {
			continue
		}
		st = st.With(res, req)
		h := Holding{Name: fmt.Sprintf("w%d", len(in.Holdings)), CPUs: res.CPUs, Movable: r.IntN(4) < 3,
			Policy: req.Policy, Resident: map[int]uint64{}, Memory: req.Memory, MemHeld: res.MemHeld}
		for _, n := range res.NUMANodes {
			h.Resident[n] = uint64(r.IntN(4)) * gib
		}
		in.Holdings = append(in.Holdings, h)
	}
	in.State = cpualloc.State{Free: st.Free}
	in.Request = cpualloc.Request{CPUs: total/4 + 1 + r.IntN(total/4)} // more than half a node, at most one
	if memory {
		in.Request.Memory.Bytes = uint64(r.IntN(4)) * gib
	}
	return in
}

// exhaustive is the cheapest plan over every group of nodes, every subset
// of the movable workloads on it and every order, with no bound, the
// request placed on the group freed; ok is false when none works.
func exhaustive(topo *topology.Topology, in Input) (Cost, bool) {
	ideal, err := cpualloc.Allocate(topo, cpualloc.State{}, in.Reserved, in.Request)
	if err != nil {
		return Cost{}, false
	}
	start := in.State
	for _, h := range in.Holdings {
		start.Exclusive = start.Exclusive.Union(h.CPUs)
	}
	usual := func(res cpualloc.Result) bool {
		return len(res.NUMANodes) <= len(ideal.NUMANodes) && res.Policy == ideal.Policy &&
			(in.State.Free == nil || in.Request.Memory.IsZero() || len(res.MemNodes) <= len(ideal.NUMANodes))
	}
	if res, err := cpualloc.Allocate(topo, start, in.Reserved, in.Request); err == nil && usual(res) {
		return Cost{}, true
	}
	var best Cost
	found := false
	for _, group := range nodeGroups(topo, len(ideal.NUMANodes)) {
		var on []Holding
		for _, h := range in.Holdings {
			if h.Movable && !h.CPUs.Intersection(group).IsEmpty() {
				on = append(on, h)
			}
		}
		for mask := 1; mask < 1<<len(on); mask++ {
			var set []Holding
			for i, h := range on {
				if mask&(1<<i) != 0 {
					set = append(set, h)
				}
			}
			eachOrder(set, func(order []Holding) {
				if c, ok := replayOrder(topo, start, in, group, order, usual); ok && (!found || c.Less(best)) {
					best, found = c, true
				}
			})
		}
	}
	return best, found
}

// nodeGroups is the CPUs of every group of k nodes.
func nodeGroups(topo *topology.Topology, k int) []cpuset.CPUSet {
	var out []cpuset.CPUSet
	var walk func(from int, cur cpuset.CPUSet, left int)
	walk = func(from int, cur cpuset.CPUSet, left int) {
		if left == 0 {
			out = append(out, cur)
			return
		}
		for i := from; i < len(topo.Nodes); i++ {
			walk(i+1, cur.Union(topo.Nodes[i].CPUs), left-1)
		}
	}
	walk(0, cpuset.New(), k)
	return out
}

func eachOrder(s []Holding, f func([]Holding)) {
	idx := make([]int, len(s))
	for i := range idx {
		idx[i] = i
	}
	permute(idx, 0, func(order []int) {
		out := make([]Holding, len(order))
		for i, j := range order {
			out[i] = s[j]
		}
		f(out)
	})
}

// replayOrder moves order's workloads off away's CPUs one by one, as the
// allocator places them, then places the request on away's CPUs.
func replayOrder(topo *topology.Topology, st cpualloc.State, in Input, away cpuset.CPUSet, order []Holding,
	usual func(cpualloc.Result) bool) (Cost, bool) {
	var c Cost
	for _, h := range order {
		req := cpualloc.Request{CPUs: h.CPUs.Size(), Policy: h.Policy, Memory: h.Memory}
		if wholeCoresOf(topo, h.CPUs) {
			req.Policy = cpualloc.FullPCPUs
		}
		res, err := cpualloc.Allocate(topo, st, in.Reserved.Union(away), req)
		nodes := len(topo.NodesOf(h.CPUs))
		if err != nil || len(res.NUMANodes) > nodes ||
			(st.Free != nil && !h.Memory.IsZero() && len(res.MemNodes) > max(nodes, heldNodes(h.MemHeld))) {
			return Cost{}, false
		}
		st = st.With(res, req)
		st.Exclusive = st.Exclusive.Difference(h.CPUs)
		if st.Free != nil {
			for n, m := range h.MemHeld {
				st.Free[n] = st.Free[n].Add(m)
			}
		}
		c.CPUs += h.CPUs.Size()
		c.Workloads++
		for n, b := range h.Resident {
			if !slices.Contains(res.MemNodes, n) {
				c.Bytes += b
			}
		}
	}
	st.Exclusive = st.Exclusive.Union(topo.CPUSet().Difference(away))
	res, err := cpualloc.Allocate(topo, st, in.Reserved, in.Request)
	return c, err == nil && usual(res)
}

func wholeCoresOf(topo *topology.Topology, s cpuset.CPUSet) bool {
	for _, c := range topo.CPUs {
		if !s.Contains(c.ID) {
			continue
		}
		for _, o := range topo.CPUs {
			if o.Socket == c.Socket && o.Core == c.Core && !s.Contains(o.ID) {
				return false
			}
		}
	}
	return true
}

// fourNodes16 is 2 sockets of 2 nodes of 2 cores of 2 threads: requests of
// 5-8 CPUs need two nodes.
var fourNodes16 = fixture.Shape{Name: "4n-2c-ht", Sockets: 2, NUMAPerSocket: 2, L3PerNUMA: 1, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 * gib}

// TestPlanIsMinimalOnTwoNodeGroups is TestPlanIsMinimal for requests that
// need two of four nodes.
func TestPlanIsMinimalOnTwoNodeGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 8))
	topo := fixture.MustBuild(fourNodes16)
	withMoves := 0
	for i := range 2500 {
		in := randomInput(r, topo)
		in.Request.CPUs = 5 + r.IntN(4)
		want, ok := exhaustive(topo, in)
		plan, err := Make(topo, in)
		switch {
		case !ok && !errors.Is(err, ErrNoMoves):
			t.Fatalf("case %d %+v: exhaustive finds none, planner %+v, %v", i, in, plan, err)
		case ok && (err != nil || plan.Cost != want):
			t.Fatalf("case %d %+v: exhaustive finds cost %+v, planner %+v, %v", i, in, want, plan.Cost, err)
		case ok:
			checkReplay(t, topo, in, plan)
			if len(plan.Moves) > 0 {
				withMoves++
			}
		}
	}
	if withMoves < 100 {
		t.Fatalf("%d random cases needed moves: the property says little", withMoves)
	}
	t.Logf("%d cases needed moves", withMoves)
}

// TestPlanIsMinimal holds the planner to the exhaustive search on random
// small machines: the same cost, or none when none exists, and every plan
// carried out move by move never puts two owners on a CPU.
func TestPlanIsMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 7))
	withMoves, none := 0, 0
	for i := range 3000 {
		shape := smallMachines[i%len(smallMachines)]
		topo := fixture.MustBuild(shape)
		in := randomInput(r, topo)
		want, ok := exhaustive(topo, in)
		plan, err := Make(topo, in)
		if !ok {
			if !errors.Is(err, ErrNoMoves) {
				t.Fatalf("%s case %d %+v: exhaustive finds none, planner %+v, %v", shape.Name, i, in, plan, err)
			}
			none++
			continue
		}
		if err != nil {
			t.Fatalf("%s case %d %+v: exhaustive finds cost %+v, planner %v", shape.Name, i, in, want, err)
		}
		if plan.Cost != want || plan.Bounded {
			t.Fatalf("%s case %d %+v: planner cost %+v (bounded %v), exhaustive %+v", shape.Name, i, in, plan.Cost, plan.Bounded, want)
		}
		checkReplay(t, topo, in, plan)
		if len(plan.Moves) > 0 {
			withMoves++
		}
	}
	if withMoves < 300 || none < 100 {
		t.Fatalf("%d random cases needed moves, %d had none: the property says little", withMoves, none)
	}
	t.Logf("%d cases needed moves, %d had none", withMoves, none)
}

package cpualloc

import (
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Resize grows or shrinks held, the CPUs a workload holds alone, to
// req.CPUs without moving any CPU it keeps: a grow returns a superset of
// held, a shrink a subset. st is the node's occupancy; held may be in
// st.Exclusive (it is the workload's own). See docs/allocator.md, "Resize".
//
// A grow takes, CPU by CPU, the free CPU closest to the set: a sibling of
// one of its cores, then its L3 group, its NUMA node, its socket, then the
// nearest other node (SLIT distance); within that, whole free cores for the
// whole-core part of what is added (full-pcpus takes nothing else), one
// thread per core for spread-by-pcpus, and lowest CPU id last. It fails
// with ErrInsufficient, leaving nothing changed, when the policy finds
// too few free CPUs. A shrink releases whole cores first, those farthest
// from the set's home (the NUMA node, then the L3 group, holding most of
// it) first, then the threads of cores it holds in part, so the cores it
// keeps stay whole and on its node. static-burst sets are not resized in
// place: their CPUs are shared, and the allocator chooses them again.
func Resize(t *topology.Topology, st State, reserved, held cpuset.CPUSet, req Request) (Result, error) {
	a, err := allocatorFor(t)
	if err != nil {
		return Result{}, err
	}
	return a.Resize(st, reserved, held, req)
}

// Resize is the package's Resize on the allocator's topology.
func (a *Allocator) Resize(st State, reserved, held cpuset.CPUSet, req Request) (Result, error) {
	req, err := req.normalised()
	if err != nil {
		return Result{}, err
	}
	if req.Policy == StaticBurst {
		return Result{}, invalidf("%s: a static-burst set is chosen again, not resized", StaticBurst)
	}
	ix := a.ix
	for _, id := range held.UnsortedList() {
		if id < 0 || id >= len(ix.cpuCore) || ix.cpuCore[id] < 0 {
			return Result{}, invalidf("resize: held cpu %d is offline or does not exist", id)
		}
	}
	if held.IsEmpty() {
		return Result{}, invalidf("resize: no CPUs held")
	}
	n := held.Size()
	if req.Policy == FullPCPUs && ix.uniform && (req.CPUs-n)%ix.threads != 0 {
		return Result{}, invalidf("%s: resizing %d CPUs to %d is not a multiple of %d threads per core",
			FullPCPUs, n, req.CPUs, ix.threads)
	}
	outside, err := ix.outsideMemNodes(held, req.MemNodes)
	if err != nil {
		return Result{}, err
	}
	var ids []int
	switch {
	case req.CPUs == n:
		ids = held.List()
	case req.CPUs < n:
		ids = ix.shrink(held, n-req.CPUs, req.Policy)
	default:
		others := occupancy{bits: st.Exclusive.Difference(held).w, burst: st.BurstMilli, outside: outside}
		v, err := ix.newView(others, reserved, req)
		if err != nil {
			return Result{}, err
		}
		defer ix.views.Put(v)
		if ids, err = v.grow(held, req.CPUs-n); err != nil {
			return Result{}, insideGroup(err, req.MemNodes)
		}
	}
	return withMemNodes(ix.result(cpuset.New(ids...).List(), req.Policy), req.MemNodes), nil
}

// setCounts counts a CPU set per core, L3 group, node and socket.
type setCounts struct {
	core, l3, node []int
	socket         map[int]int
}

func (ix *index) countSet(set bitset) setCounts {
	c := setCounts{core: make([]int, len(ix.cores)), l3: make([]int, len(ix.l3s)),
		node: make([]int, len(ix.nodes)), socket: map[int]int{}}
	for _, id := range ix.online {
		if set.has(id) {
			k := ix.cpuCore[id]
			co := ix.cores[k]
			c.core[k]++
			c.l3[co.l3]++
			c.node[co.node]++
			c.socket[ix.cells[ix.l3s[co.l3].cell].socket]++
		}
	}
	return c
}

// closeness ranks core k by how near it is to the set counted in c: 0 the
// set has a thread on it, 1 in its L3 group, 2 on its node, 3 on its
// socket, then 4 plus the SLIT distance from the set's nearest node.
func (ix *index) closeness(c setCounts, k int) int {
	co := ix.cores[k]
	switch {
	case c.core[k] > 0:
		return 0
	case c.l3[co.l3] > 0:
		return 1
	case c.node[co.node] > 0:
		return 2
	case c.socket[ix.cells[ix.l3s[co.l3].cell].socket] > 0:
		return 3
	}
	best := -1
	for ni, cnt := range c.node {
		if d := ix.distance[ni][co.node]; cnt > 0 && (best < 0 || d < best) {
			best = d
		}
	}
	return 4 + max(best, 0)
}

// grow adds k free CPUs to held, or fails with nothing added.
func (v *view) grow(held cpuset.CPUSet, k int) ([]int, error) {
	ix := v.ix
	set := newBitset(ix.words)
	set.addSet(held, ix.online)
	out := held.List()
	free := func(id int) bool { return v.usable.has(id) && !set.has(id) }
	freeOn := func(k int) int {
		cnt := 0
		for _, id := range ix.cores[k].cpus {
			if free(id) {
				cnt++
			}
		}
		return cnt
	}
	// A whole free core: all its threads free and it is a whole core.
	wholeFree := func(k int) bool { return ix.wholeCore(k) && freeOn(k) == len(ix.cores[k].cpus) }
	take := func(id int) { set.set(id); out = append(out, id) }
	for k > 0 {
		c := ix.countSet(set)
		best, bestKey := -1, [4]int{}
		for ci := range ix.cores {
			if freeOn(ci) == 0 {
				continue
			}
			size := len(ix.cores[ci].cpus)
			tier := ix.closeness(c, ci)
			var key [4]int
			switch v.req.Policy {
			case FullPCPUs:
				if !wholeFree(ci) || size > k {
					continue
				}
				key = [4]int{tier, 0, 0, ci}
			case SpreadByPCPUs:
				// A core of its own for each thread, anywhere on the set's
				// nodes, before a second thread on a core; left-over
				// threads before whole free cores.
				coarse, own, whole := 0, 0, 0
				if tier > 2 {
					coarse = tier
				}
				if c.core[ci] > 0 {
					own = 1
				}
				if wholeFree(ci) {
					whole = 1
				}
				key = [4]int{coarse, own, tier*2 + whole, ci}
			default:
				// Complete the set's cores first, then whole free cores
				// while a whole core's worth is left, then threads, from a
				// core no one uses before a left-over beside someone.
				second := 3
				switch {
				case c.core[ci] > 0:
					second = 0
				case wholeFree(ci) && size <= k:
					second = 1
				case wholeFree(ci):
					second = 2
				}
				key = [4]int{tier, second, 0, ci}
			}
			if best < 0 || slices.Compare(key[:], bestKey[:]) < 0 {
				best, bestKey = ci, key
			}
		}
		if best < 0 {
			return nil, v.growShort(held, k+len(out)-held.Size())
		}
		grab := 1
		if v.req.Policy == FullPCPUs || v.req.Policy != SpreadByPCPUs && bestKey[1] == 1 {
			grab = len(ix.cores[best].cpus) // a whole core at once
		}
		for _, id := range ix.cores[best].cpus {
			if grab > 0 && free(id) {
				take(id)
				grab--
				k--
			}
		}
	}
	return out, nil
}

// growShort is the error of a grow that cannot fit: how many CPUs were
// asked beside the set, and how many the policy finds free.
func (v *view) growShort(held cpuset.CPUSet, asked int) error {
	free := 0
	for ci := range v.ix.cores {
		for _, id := range v.ix.cores[ci].cpus {
			if v.usable.has(id) && !held.Contains(id) && (v.req.Policy != FullPCPUs || v.whole[ci]) {
				free++
			}
		}
	}
	return shortf("%s: %d more CPUs asked beside %s, %d free", v.req.Policy, asked, held, free)
}

// shrink releases k CPUs of held and returns the rest.
func (ix *index) shrink(held cpuset.CPUSet, k int, policy Policy) []int {
	set := newBitset(ix.words)
	set.addSet(held, ix.online)
	c := ix.countSet(set)
	home, homeL3 := argmax(c.node), argmax(c.l3)
	var cores []int // the set's cores, the first to release first
	for ci := range ix.cores {
		if c.core[ci] > 0 {
			cores = append(cores, ci)
		}
	}
	farKey := func(ci int) []int {
		co := ix.cores[ci]
		offNode, offL3 := 0, 0
		if co.node != home {
			offNode = 1
		}
		if co.l3 != homeL3 {
			offL3 = 1
		}
		return []int{-offNode, -offL3, -ci}
	}
	slices.SortStableFunc(cores, func(a, b int) int { return slices.Compare(farKey(a), farKey(b)) })
	release := func(ci, n int) {
		cpus := ix.cores[ci].cpus
		for i := len(cpus) - 1; i >= 0 && n > 0; i-- {
			if set.has(cpus[i]) {
				set[cpus[i]>>6] &^= 1 << (uint(cpus[i]) & 63)
				c.core[ci]--
				n--
			}
		}
	}
	// Whole cores, then cores held in part, each while it fits in k.
	for _, whole := range []bool{true, false} {
		for _, ci := range cores {
			n := c.core[ci]
			if n > 0 && n <= k && (n == len(ix.cores[ci].cpus)) == whole {
				release(ci, n)
				k -= n
			}
		}
	}
	// What is left is less than any core the set still has: threads of the
	// farthest one (full-pcpus never gets here: its counts are whole cores).
	for _, ci := range cores {
		if k > 0 && c.core[ci] > 0 && policy != FullPCPUs {
			release(ci, k)
			k = 0
		}
	}
	var out []int
	for _, id := range ix.online {
		if set.has(id) {
			out = append(out, id)
		}
	}
	return out
}

func argmax(xs []int) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

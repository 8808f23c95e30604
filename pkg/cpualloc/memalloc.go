package cpualloc

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"
)

// memFit is one decision's memory: what the request asks and what each CPU
// node (by index) has free. Nodes without CPUs never join a memory group:
// a workload's CPUs and its memory's nearest nodes are CPU nodes.
type memFit struct {
	asked Memory
	ids   []int    // node id by index
	free  []Memory // by node index; zero for a node absent from State.Free
}

// holds says whether the nodes (indices) together hold every kind asked,
// huge pages in whole pages of each node.
func (m *memFit) holds(nodes []int) bool {
	for k := range memKinds {
		asked := *m.asked.at(k)
		if asked == 0 {
			continue
		}
		var room Memory
		for _, n := range nodes {
			room = room.Add(Memory{Bytes: roomOf(m.free[n], k)})
		}
		if room.Bytes < asked {
			return false
		}
	}
	return true
}

// left is the memory of every kind the nodes keep free once the request is
// placed on them: the tie-break's measure of the pressure left behind, the
// more the better.
func (m *memFit) left(nodes []int) uint64 {
	var room Memory
	for _, n := range nodes {
		room = room.Add(m.free[n])
	}
	room = room.Sub(m.asked)
	return Memory{Bytes: room.Bytes}.Add(Memory{Bytes: room.HugePages2Mi}).Add(Memory{Bytes: room.HugePages1Gi}).Bytes
}

// newMemFit checks free against the topology and lays it out by node
// index. A node id the topology lacks is an invalid request: its memory
// would be counted nowhere.
func (ix *index) newMemFit(free map[int]Memory, asked Memory) (*memFit, error) {
	if len(free) > len(ix.topoNodes) {
		return nil, invalidf("free: %d nodes given, the topology has %d", len(free), len(ix.topoNodes))
	}
	for id := range free {
		if _, ok := slices.BinarySearch(ix.topoNodes, id); !ok {
			return nil, invalidf("free: node %d is not a NUMA node of the topology (nodes %v)", ix.lowestUnknown(free), ix.topoNodes)
		}
	}
	m := &memFit{asked: asked, ids: make([]int, len(ix.nodes)), free: make([]Memory, len(ix.nodes))}
	for i, n := range ix.nodes {
		m.ids[i], m.free[i] = n.id, free[n.id]
	}
	return m, nil
}

// lowestUnknown is the lowest id of free the topology lacks: sorting the
// ids only once one is known bad keeps the valid case free of allocations,
// and the error the same whatever order the map ranges in.
func (ix *index) lowestUnknown(free map[int]Memory) int {
	for _, id := range slices.Sorted(maps.Keys(free)) {
		if _, ok := slices.BinarySearch(ix.topoNodes, id); !ok {
			return id
		}
	}
	return -1
}

// allocateMemory places req where its CPUs and memory both fit. First every
// domain whose own nodes hold the memory competes under the policy's usual
// ranking, memory left behind breaking the last ties; the memory group is
// then the CPUs' nodes when they hold it, else the smallest, nearest group
// around them that does. When no such domain serves the policy, the memory
// spills as kubelet's Memory Manager spills it: over the smallest group of
// nodes, the least summed distance first, that holds it and in which the
// policy finds the CPUs.
func (a *Allocator) allocateMemory(st occupancy, free map[int]Memory, reserved cpuset.CPUSet, req Request) (Result, error) {
	ix := a.ix
	m, err := ix.newMemFit(free, req.Memory)
	if err != nil {
		return Result{}, err
	}
	first := st
	first.mem = m
	ids, applied, err := a.place(first, reserved, req)
	if err == nil {
		res := ix.resultOf(st, ids, applied)
		res.MemNodes = ix.memGroup(m, ix.nodeIndices(ids))
		if !st.ranking {
			res.MemHeld = Hold(res.MemNodes, free, req.Memory)
		}
		return res, nil
	}
	if errors.Is(err, ErrInvalidRequest) {
		return Result{}, err
	}
	// Taking CPUs away never makes a policy find more room, so when no
	// group holds the memory, or the whole machine has no room for the
	// CPUs, no group can serve the request: say so without trying each.
	if err := memoryShort(m); err != nil {
		return Result{}, err
	}
	if _, _, err := a.place(st, reserved, req); err != nil {
		return Result{}, err
	}
	for k := 2; k < len(ix.spill); k++ {
		for _, c := range ix.spill[k] {
			if !m.holds(c.nodes) {
				continue
			}
			inside := st
			inside.outside = orWords(ix.cpusOutside(c.nodes), st.outside)
			ids, applied, err := a.place(inside, reserved, req)
			if err != nil {
				continue
			}
			res := ix.resultOf(st, ids, applied)
			res.MemNodes = ix.idsOf(c.nodes)
			if own := ix.nodeIndices(ids); m.holds(own) {
				res.MemNodes = ix.idsOf(own) // the CPUs' nodes hold it after all
			}
			if !st.ranking {
				res.MemHeld = Hold(res.MemNodes, free, req.Memory)
			}
			return res, nil
		}
	}
	// The group of every node holds the memory and the CPUs fit the whole
	// machine, so the loop returned at its last group at the latest.
	return Result{}, shortf("%s: no group of nodes holds both %d CPUs and %s", req.Policy, req.CPUs, describeMemory(m.asked))
}

// describeMemory names the kinds of m that are not zero, memory always.
func describeMemory(m Memory) string {
	parts := []string{"memory " + formatBytes(m.Bytes)}
	for k := 1; k < len(memKinds); k++ {
		if v := *m.at(k); v > 0 {
			parts = append(parts, memKinds[k].name+" "+formatBytes(v))
		}
	}
	return strings.Join(parts, ", ")
}

// memGroup is the nodes (ids) a placement on the CPU nodes cpuNodes
// (indices) binds its memory to (see spillAround).
func (ix *index) memGroup(m *memFit, cpuNodes []int) []int {
	return ix.idsOf(ix.spillAround(m, cpuNodes))
}

// spillAround is the nodes (indices) whose memory a workload on cpuNodes
// gets: those nodes when they hold it, else the smallest group around them
// that does, the least summed distance first. When none does, it is every
// node: the caller checks m.holds when it cannot know that one does.
func (ix *index) spillAround(m *memFit, cpuNodes []int) []int {
	if m.holds(cpuNodes) {
		return cpuNodes
	}
	for k := len(cpuNodes) + 1; k < len(ix.spill); k++ {
		for _, c := range ix.spill[k] {
			if isSubset(cpuNodes, c.nodes) && m.holds(c.nodes) {
				return c.nodes
			}
		}
	}
	// Machines too big for every subset: grow the group by its nearest
	// node until it holds the memory, or every node is in.
	group := slices.Clone(cpuNodes)
	for !m.holds(group) && len(group) < len(ix.nodes) {
		group = ix.grow(group)
	}
	return group
}

// buildSpill orders each size's node sets as kubelet's Memory Manager
// prefers them: the least summed SLIT distance, then fewest sockets, then
// lowest node indices.
func buildSpill(combos [][]combo) [][]combo {
	out := make([][]combo, len(combos))
	for k, cs := range combos {
		out[k] = slices.SortedFunc(slices.Values(cs), func(a, b combo) int {
			return cmp.Or(cmp.Compare(a.distance, b.distance), cmp.Compare(a.sockets, b.sockets),
				slices.Compare(a.nodes, b.nodes))
		})
	}
	return out
}

// cpusOutside is the CPUs of every node not in nodes (indices), as bits.
func (ix *index) cpusOutside(nodes []int) []uint64 {
	w := make([]uint64, ix.words)
	for ni, n := range ix.nodes {
		if slices.Contains(nodes, ni) {
			continue
		}
		for _, c := range n.cores {
			for _, id := range ix.cores[c].cpus {
				w[id>>6] |= 1 << (uint(id) & 63)
			}
		}
	}
	return w
}

// orWords is a with every bit of b set too (b may be nil).
func orWords(a, b []uint64) []uint64 {
	for i := range min(len(a), len(b)) {
		a[i] |= b[i]
	}
	return a
}

// nodeIndices is the sorted indices of the nodes the CPUs sit on.
func (ix *index) nodeIndices(ids []int) []int {
	var out []int
	for _, id := range ids {
		if n := ix.cores[ix.cpuCore[id]].node; !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func (ix *index) idsOf(nodes []int) []int {
	out := make([]int, len(nodes))
	for i, n := range nodes {
		out[i] = ix.nodes[n].id
	}
	return out
}

func isSubset(small, big []int) bool {
	for _, n := range small {
		if !slices.Contains(big, n) {
			return false
		}
	}
	return true
}

package cpualloc

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Errors returned by Allocate match one of these with errors.Is, so a caller
// (a scheduler filter, say) can tell "this node is full" from "this request
// is malformed".
var (
	ErrInvalidRequest = errors.New("invalid request")
	ErrInsufficient   = errors.New("not enough free CPUs")
)

type allocError struct {
	kind error
	msg  string
}

func (e *allocError) Error() string        { return e.msg }
func (e *allocError) Is(target error) bool { return target == e.kind }

func invalidf(format string, args ...any) error {
	return &allocError{ErrInvalidRequest, fmt.Sprintf(format, args...)}
}

func shortf(format string, args ...any) error {
	return &allocError{ErrInsufficient, fmt.Sprintf(format, args...)}
}

func notEnough(p Policy, requested, available int) error {
	return shortf("%s: not enough free CPUs: requested=%d, available=%d", p, requested, available)
}

// Allocator decides allocations on one topology. Building it indexes the
// topology once; the topology must not be changed afterwards. It is safe for
// concurrent use.
type Allocator struct{ ix *index }

// NewAllocator validates t and indexes it.
func NewAllocator(t *topology.Topology) (*Allocator, error) {
	ix, err := buildIndex(t)
	if err != nil {
		return nil, err
	}
	return &Allocator{ix: ix}, nil
}

// Allocate picks req.CPUs CPUs for req given the occupancy st. Reserved CPUs
// and the topology's isolated CPUs are never handed out unless
// req.UseReserved. When st.Free is set and req.Memory is not zero, the
// CPUs go only where the memory fits too (see memalloc.go). See
// docs/allocator.md for every policy's rules.
func (a *Allocator) Allocate(st State, reserved cpuset.CPUSet, req Request) (Result, error) {
	return a.allocate(occupancy{bits: st.Exclusive.w, burst: st.BurstMilli}, st.Free, reserved, req)
}

// AllocateBits is Allocate with the exclusive CPUs given as the words of
// their bits (CPU id i is bit i%64 of word i/64), which it only reads: a
// caller that keeps them that way for many nodes (the scheduler) spares
// making a State per decision. Memory is not accounted: AllocateBitsFree
// takes what each node has free.
func (a *Allocator) AllocateBits(exclusive []uint64, burstMilli map[int]int64, reserved cpuset.CPUSet, req Request) (Result, error) {
	return a.allocate(occupancy{bits: exclusive, burst: burstMilli}, nil, reserved, req)
}

// AllocateBitsFree is AllocateBits with the memory each node has free, as
// State.Free: nil, or a request without memory, is exactly AllocateBits.
func (a *Allocator) AllocateBitsFree(exclusive []uint64, burstMilli map[int]int64, free map[int]Memory, reserved cpuset.CPUSet, req Request) (Result, error) {
	return a.allocate(occupancy{bits: exclusive, burst: burstMilli}, free, reserved, req)
}

// RankBitsFree is AllocateBitsFree for a caller that only ranks the
// placement (how many CPUs, on which nodes and cores) and keeps nothing of
// it: the CPUs come as a list, Result.IDs, with CPUs left empty, and
// MemHeld is not made. The same CPUs as AllocateBitsFree's. The scheduler
// asks it of every node whose state changed, for every kind of pod, and
// the set and the memory held were a fifth of each answer's cost.
func (a *Allocator) RankBitsFree(exclusive []uint64, burstMilli map[int]int64, free map[int]Memory, reserved cpuset.CPUSet, req Request) (Result, error) {
	return a.allocate(occupancy{bits: exclusive, burst: burstMilli, ranking: true}, free, reserved, req)
}

// occupancy is a State, its exclusive CPUs as words of bits.
type occupancy struct {
	bits  []uint64
	burst map[int]int64
	// ranking says the result is only ranked (RankBitsFree): its CPUs as
	// a list, no set, no memory held.
	ranking bool
	// outside, when set, holds more CPUs the request may not take: those of
	// the nodes outside the group its memory spills over.
	outside []uint64
	// mem, when set, admits only domains whose nodes hold the memory.
	mem *memFit
}

func (a *Allocator) allocate(st occupancy, free map[int]Memory, reserved cpuset.CPUSet, req Request) (Result, error) {
	req, err := req.normalised()
	if err != nil {
		return Result{}, err
	}
	if len(req.Near) > 0 {
		return a.allocateNear(st, free, reserved, req)
	}
	return a.placeMemory(st, free, reserved, req)
}

// placeMemory places req where its CPUs fit and, when memory is accounted,
// where its memory fits too.
func (a *Allocator) placeMemory(st occupancy, free map[int]Memory, reserved cpuset.CPUSet, req Request) (Result, error) {
	if free == nil || req.Memory.IsZero() {
		ids, applied, err := a.place(st, reserved, req)
		if err != nil {
			return Result{}, err
		}
		return a.ix.resultOf(st, ids, applied), nil
	}
	return a.allocateMemory(st, free, reserved, req)
}

// place runs req's policy on st.
func (a *Allocator) place(st occupancy, reserved cpuset.CPUSet, req Request) ([]int, Policy, error) {
	v, err := a.ix.newView(st, reserved, req)
	if err != nil {
		return nil, "", err
	}
	defer a.ix.views.Put(v)
	var ids []int
	applied := req.Policy
	switch req.Policy {
	case FullPCPUs:
		ids, err = v.fullPCPUs()
	case FullPCPUsThenThreads:
		if req.CPUs%a.ix.threads == 0 {
			applied = FullPCPUs
			ids, err = v.fullPCPUs()
			if err != nil || a.ix.spans(ids) > 1 {
				// Whole cores alone would refuse the request or split it over
				// more sockets or nodes than threads would; threads serve it
				// better then.
				if alt, altErr := a.threadsFallback(st, reserved, req); altErr == nil &&
					(err != nil || a.ix.closer(alt, ids)) {
					ids, err, applied = alt, nil, FullPCPUsThenThreads
				}
			}
		} else {
			ids, err = v.fullPCPUsThenThreads()
		}
	case SpreadByPCPUs:
		ids, err = v.spreadByPCPUs()
	case DistributeAcrossNUMA:
		ids, err = v.distributeAcrossNUMA()
	case StaticBurst:
		ids, err = v.staticBurst()
	}
	return ids, applied, err
}

// threadsFallback runs full-pcpus-then-threads on a fresh view, so nothing the
// first attempt left in its scratch space leaks into the second.
func (a *Allocator) threadsFallback(st occupancy, reserved cpuset.CPUSet, req Request) ([]int, error) {
	v, err := a.ix.newView(st, reserved, req)
	if err != nil {
		return nil, err
	}
	defer a.ix.views.Put(v)
	return v.fullPCPUsThenThreads()
}

// closer reports whether a spans fewer sockets than b, or as many and fewer
// NUMA nodes.
func (ix *index) closer(a, b []int) bool {
	sa, sb := ix.sockets(a), ix.sockets(b)
	return sa < sb || sa == sb && ix.spans(a) < ix.spans(b)
}

func (ix *index) sockets(ids []int) int {
	seen := map[int]bool{}
	for _, id := range ids {
		seen[ix.cells[ix.l3s[ix.cores[ix.cpuCore[id]].l3].cell].socket] = true
	}
	return len(seen)
}

// spans counts the NUMA nodes the CPUs sit on, without allocating for the
// common answer of one.
func (ix *index) spans(ids []int) int {
	if len(ids) == 0 {
		return 0
	}
	first := ix.cores[ix.cpuCore[ids[0]]].node
	seen := map[int]bool{}
	for _, id := range ids {
		if n := ix.cores[ix.cpuCore[id]].node; n != first || len(seen) > 0 {
			seen[n] = true
		}
	}
	if len(seen) == 0 {
		return 1
	}
	seen[first] = true
	return len(seen)
}

// resultOf is result, or for a ranking (occupancy.ranking) the same with
// the CPUs as a list of their own (ids is a view's scratch, reused).
func (ix *index) resultOf(st occupancy, ids []int, applied Policy) Result {
	if !st.ranking {
		return ix.result(ids, applied)
	}
	nodes := ix.spanned(ids)
	return Result{IDs: slices.Clone(ids), NUMANodes: nodes, MemNodes: slices.Clone(nodes), Policy: applied}
}

func (ix *index) result(ids []int, applied Policy) Result {
	nodes := ix.spanned(ids)
	return Result{CPUs: cpuset.New(ids...), NUMANodes: nodes, MemNodes: slices.Clone(nodes), Policy: applied}
}

// spanned is the sorted ids of the nodes ids sit on.
func (ix *index) spanned(ids []int) []int {
	on := make([]bool, len(ix.nodes))
	for _, id := range ids {
		on[ix.cores[ix.cpuCore[id]].node] = true
	}
	var nodes []int
	for i, yes := range on {
		if yes {
			nodes = append(nodes, ix.nodes[i].id)
		}
	}
	return nodes
}

func (r Request) normalised() (Request, error) {
	if r.CPUs <= 0 {
		return r, invalidf("cpus must be at least 1, got %d", r.CPUs)
	}
	switch r.Policy {
	case "":
		r.Policy = FullPCPUsThenThreads
	case FullPCPUs, FullPCPUsThenThreads, SpreadByPCPUs, DistributeAcrossNUMA, StaticBurst:
	default:
		return r, invalidf("unknown policy %q: want %s, %s, %s, %s or %s", r.Policy,
			FullPCPUs, FullPCPUsThenThreads, SpreadByPCPUs, DistributeAcrossNUMA, StaticBurst)
	}
	switch r.NUMAStrategy {
	case "":
		r.NUMAStrategy = MostAllocated
	case MostAllocated, LeastAllocated:
	default:
		return r, invalidf("unknown numa strategy %q: want %s or %s", r.NUMAStrategy, MostAllocated, LeastAllocated)
	}
	if r.RequestMilli < 0 {
		return r, invalidf("requestMilli must not be negative, got %d", r.RequestMilli)
	}
	if r.Policy == StaticBurst && r.RequestMilli > int64(r.CPUs)*1000 {
		return r, invalidf("%s: requestMilli=%d exceeds the limit of %d CPUs (%d millicores)",
			StaticBurst, r.RequestMilli, r.CPUs, int64(r.CPUs)*1000)
	}
	return r, r.validMemory()
}

// Allocate is Allocator.Allocate on t, reusing the index of the last few
// topologies it saw (keyed by pointer: treat a topology as immutable once
// passed here).
func Allocate(t *topology.Topology, st State, reserved cpuset.CPUSet, req Request) (Result, error) {
	a, err := allocatorFor(t)
	if err != nil {
		return Result{}, err
	}
	return a.Allocate(st, reserved, req)
}

// cachedTopologies bounds the cache so a caller that rebuilds topologies
// (a scheduler watching many nodes) cannot grow it without end.
const cachedTopologies = 64

var allocators struct {
	sync.Mutex
	byTopology map[*topology.Topology]*Allocator
	order      []*topology.Topology // insertion order, oldest first
}

func allocatorFor(t *topology.Topology) (*Allocator, error) {
	allocators.Lock()
	a, ok := allocators.byTopology[t]
	allocators.Unlock()
	if ok {
		return a, nil
	}
	a, err := NewAllocator(t)
	if err != nil {
		return nil, err
	}
	allocators.Lock()
	defer allocators.Unlock()
	if allocators.byTopology == nil {
		allocators.byTopology = map[*topology.Topology]*Allocator{}
	}
	if _, ok := allocators.byTopology[t]; !ok {
		allocators.byTopology[t] = a
		allocators.order = append(allocators.order, t)
		if len(allocators.order) > cachedTopologies {
			delete(allocators.byTopology, allocators.order[0])
			allocators.order = allocators.order[1:]
		}
	}
	return a, nil
}

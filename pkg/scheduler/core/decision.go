package core

import (
	"math/bits"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// keptDecision is what the state reads of the decision a bound pod carries:
// its CPUs, as bits, its policy and its request. Kept as the parsed
// assignment, a pinned pod held a CPU set (a map) and the assignment's
// other fields, about 350 bytes, 0.8 MB for 2500 pinned pods at 1000
// nodes; as bits a 192-CPU node's decision is three words. The holding
// is made again where a change reads it (tally, heldOn), once a change.
type keptDecision struct {
	cpus   []uint64 // CPU i is bit i%64 of word i/64; no word past the highest CPU
	policy cpualloc.Policy
	milli  int64 // RequestMilli
	// mem is what the decision holds of memory by NUMA node (cpualloc.Hold
	// over its memory nodes), counted while the node's report does not
	// list the pod; nil for none.
	mem heldMem
}

// heldMem is d's memory held, nil for no decision.
func (d *keptDecision) heldMem() heldMem {
	if d == nil {
		return nil
	}
	return d.mem
}

// decisionOf is what the state keeps of a, holding mem: nil for nil. CPU
// ids outside 0..topology.MaxCPUID are dropped, as a tally drops them: no
// parsed list has them.
func decisionOf(a *workload.Assignment, mem heldMem) *keptDecision {
	if a == nil {
		return nil
	}
	top := -1
	for _, id := range a.CPUs.UnsortedList() {
		if id >= 0 && id <= topology.MaxCPUID {
			top = max(top, id)
		}
	}
	d := &keptDecision{cpus: make([]uint64, (top+64)>>6), policy: knownPolicy(a.Policy), milli: a.RequestMilli, mem: mem}
	for _, id := range a.CPUs.UnsortedList() {
		if id >= 0 && id <= topology.MaxCPUID {
			d.cpus[id>>6] |= 1 << (id & 63)
		}
	}
	return d
}

// knownPolicy is p, the package's own string when it is one of the
// allocator's policies, so that every decision does not keep a copy.
func knownPolicy(p cpualloc.Policy) cpualloc.Policy {
	for _, k := range []cpualloc.Policy{cpualloc.FullPCPUs, cpualloc.FullPCPUsThenThreads, cpualloc.SpreadByPCPUs,
		cpualloc.DistributeAcrossNUMA, cpualloc.StaticBurst} {
		if p == k {
			return k
		}
	}
	return p
}

// holding is the decision as the holding a tally counts.
func (d *keptDecision) holding() workload.Assignment {
	ids := make([]int, 0, d.size())
	for i, w := range d.cpus {
		for ; w != 0; w &= w - 1 {
			ids = append(ids, i<<6+bits.TrailingZeros64(w))
		}
	}
	return workload.Assignment{CPUs: cpuset.New(ids...), Policy: d.policy, RequestMilli: d.milli}
}

func (d *keptDecision) size() int {
	n := 0
	for _, w := range d.cpus {
		n += bits.OnesCount64(w)
	}
	return n
}

// holds says whether d holds exactly the CPUs s names.
func (d *keptDecision) holds(s cpuset.CPUSet) bool {
	n := 0
	for _, id := range s.UnsortedList() {
		if id < 0 || id>>6 >= len(d.cpus) || d.cpus[id>>6]&(1<<(id&63)) == 0 {
			return false
		}
		n++
	}
	return n == d.size()
}

// sameAs says whether d is what a decides (samePtr's comparison): nil
// only as nil.
func (d *keptDecision) sameAs(a *workload.Assignment) bool {
	if d == nil || a == nil {
		return d == nil && a == nil
	}
	return d.policy == a.Policy && d.sameHolding(*a)
}

// sameHolding is sameHolding(d.holding(), h) without making the holding.
func (d *keptDecision) sameHolding(h workload.Assignment) bool {
	burstD, burstH := d.policy == cpualloc.StaticBurst, h.Policy == cpualloc.StaticBurst
	return d.holds(h.CPUs) && burstD == burstH && (!burstD || d.milli == h.RequestMilli)
}

// Package locus runs Locus's CPU allocator as one node's exclusive CPU
// manager: it keeps the occupancy that the allocator itself is handed on every
// decision, as the node agent does.
package locus

import (
	"cmp"
	"fmt"
	"sort"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// Policies picks a policy per request, as a pod's cpu-policy annotation
// would: Whole for requests that are a multiple of the SMT width, Partial for
// the others (full-pcpus cannot serve those). An empty policy is the
// allocator's default, as for a pod without the annotation.
type Policies struct {
	Whole, Partial cpualloc.Policy
}

// Only is the same policy for every request.
func Only(p cpualloc.Policy) Policies { return Policies{Whole: p, Partial: p} }

// Default leaves the policy to the allocator for every request.
func Default() Policies { return Only("") }

func (p Policies) String() string {
	name := func(p cpualloc.Policy) string { return cmp.Or(string(p), "default") }
	if p.Whole == p.Partial {
		return name(p.Whole)
	}
	return fmt.Sprintf("%s, odd: %s", name(p.Whole), name(p.Partial))
}

// Allocator is one node under Locus. Not safe for concurrent use.
type Allocator struct {
	t        *topology.Topology
	alloc    *cpualloc.Allocator
	reserved cpuset.CPUSet
	policies Policies
	threads  int // SMT width
	state    cpualloc.State
	pods     map[int]cpuset.CPUSet
}

// New indexes t, as the node agent does once at start, and starts with no
// CPU taken.
func New(t *topology.Topology, reserved cpuset.CPUSet, p Policies) (*Allocator, error) {
	alloc, err := cpualloc.NewAllocator(t)
	if err != nil {
		return nil, err
	}
	perCore := map[int]int{}
	threads := 1
	for _, c := range t.CPUs {
		perCore[c.Core]++
		threads = max(threads, perCore[c.Core])
	}
	return &Allocator{t: t, alloc: alloc, reserved: reserved, policies: p, threads: threads,
		state: cpualloc.State{}, pods: map[int]cpuset.CPUSet{}}, nil
}

// Name is the table row label.
func (a *Allocator) Name() string { return "locus " + a.policies.String() }

func (a *Allocator) policy(n int) cpualloc.Policy {
	if n%a.threads == 0 {
		return a.policies.Whole
	}
	return a.policies.Partial
}

// WholeCores reports whether a request for n CPUs gets whole cores only:
// full-pcpus always, the default when n is a multiple of the SMT width.
func (a *Allocator) WholeCores(n int) bool {
	switch a.policy(n) {
	case cpualloc.FullPCPUs:
		return true
	case "", cpualloc.FullPCPUsThenThreads:
		return n%a.threads == 0
	}
	return false
}

// State is the occupancy the next decision will see.
func (a *Allocator) State() cpualloc.State { return a.state }

// Free returns the CPUs no pod holds, less the reserved and isolated ones.
func (a *Allocator) Free() cpuset.CPUSet {
	free := a.t.CPUSet()
	return free.Difference(a.state.Exclusive.Overlap(free)).Difference(a.reserved).Difference(a.t.Isolated)
}

// Allocate asks the allocator for n CPUs for pod id and records them.
func (a *Allocator) Allocate(id, n int) (cpuset.CPUSet, error) {
	if _, dup := a.pods[id]; dup {
		return cpuset.New(), fmt.Errorf("pod %d already admitted", id)
	}
	res, err := a.alloc.Allocate(a.state, a.reserved, cpualloc.Request{CPUs: n, Policy: a.policy(n)})
	if err != nil {
		return cpuset.New(), err
	}
	a.state.Exclusive = a.state.Exclusive.Union(res.CPUs)
	a.pods[id] = res.CPUs
	return res.CPUs, nil
}

// Release frees pod id's CPUs.
func (a *Allocator) Release(id int) error {
	cpus, ok := a.pods[id]
	if !ok {
		return fmt.Errorf("pod %d is not admitted", id)
	}
	delete(a.pods, id)
	a.state.Exclusive = a.state.Exclusive.Difference(cpus)
	return nil
}

// Pods returns the ids of admitted pods, sorted.
func (a *Allocator) Pods() []int {
	ids := make([]int, 0, len(a.pods))
	for id := range a.pods {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// Package plan is the agent's pure core: from the machine, the workloads and the
// assignments already in force, it decides which CPUs each workload gets, what
// the shared pools are, and which cgroup values follow. No I/O.
package plan

import (
	"fmt"
	"sort"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpuset"
	"github.com/locus-project/locus/pkg/topology"
)

// CPUNeed is what a workload asks of the allocator.
type CPUNeed struct {
	// Exclusive is true when the workload opted in to CPU binding
	// (cpuset-scheduler: "true") with an integer CPU limit.
	Exclusive    bool
	CPUs         int
	RequestMilli int64
	Policy       cpualloc.Policy
	NUMAStrategy cpualloc.NUMAStrategy
	// Decided, when not empty, is a CPU set chosen elsewhere (the cluster
	// scheduler) that the agent applies instead of allocating.
	Decided cpuset.CPUSet
}

// Assignment is the CPU set a workload holds. It is what the checkpoint keeps,
// so a restarted agent re-adopts workloads without moving them.
type Assignment struct {
	CPUs         cpuset.CPUSet
	Policy       cpualloc.Policy
	RequestMilli int64
}

// Problem is something the agent could not do for a workload; the workload
// keeps running in the shared pool and the problem is reported.
type Problem struct {
	Workload string `json:"workload"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

// Assign keeps every previous assignment that still matches its workload's need,
// then applies the decisions made elsewhere, then allocates the rest, each in
// name order, so the result depends only on inputs. What is in force comes
// first: a new decision that collides with CPUs a workload already holds is
// refused (CPUSetConflict) rather than moving that workload.
func Assign(t *topology.Topology, reserved cpuset.CPUSet, needs map[string]CPUNeed,
	prev map[string]Assignment) (map[string]Assignment, []Problem) {
	out := map[string]Assignment{}
	var problems []Problem
	state := cpualloc.State{Exclusive: cpuset.New(), BurstMilli: map[int]int64{}}
	online := t.CPUSet()

	// Pass 1: kept assignments (a decided workload's only while its
	// decision stands) claim their CPUs first.
	for _, name := range sortedNames(needs) {
		need := needs[name]
		old, ok := prev[name]
		if !need.Exclusive || !ok {
			continue
		}
		fits := stillFits(old, need, online, reserved)
		if !need.Decided.IsEmpty() {
			fits = old.CPUs.Equals(need.Decided) && old.Policy == need.Policy && old.RequestMilli == need.RequestMilli
		}
		if !fits || conflict(old.CPUs, online, state) != "" {
			continue
		}
		state = claim(state, old, need)
		out[name] = old
	}
	// Pass 2: new decisions made elsewhere, so allocations route around them.
	for _, name := range sortedNames(needs) {
		need := needs[name]
		if _, done := out[name]; done || !need.Exclusive || need.Decided.IsEmpty() {
			continue
		}
		if msg := conflict(need.Decided, online, state); msg != "" {
			problems = append(problems, Problem{name, "CPUSetConflict", msg})
			continue
		}
		a := Assignment{CPUs: need.Decided, Policy: need.Policy,
			RequestMilli: need.RequestMilli}
		state = claim(state, a, need)
		out[name] = a
	}
	// Pass 3: allocate what is left.
	for _, name := range sortedNames(needs) {
		need := needs[name]
		if _, done := out[name]; done || !need.Exclusive || !need.Decided.IsEmpty() {
			continue
		}
		res, err := cpualloc.Allocate(t, state, reserved, cpualloc.Request{CPUs: need.CPUs,
			Policy: need.Policy, NUMAStrategy: need.NUMAStrategy, RequestMilli: need.RequestMilli})
		if err != nil {
			problems = append(problems, Problem{name, "CPUAllocationFailed", err.Error()})
			continue
		}
		a := Assignment{CPUs: res.CPUs, Policy: need.Policy,
			RequestMilli: need.RequestMilli}
		state = claim(state, a, need)
		out[name] = a
	}
	return out, problems
}

// stillFits says whether an old assignment serves the workload's current need.
func stillFits(old Assignment, need CPUNeed, online, reserved cpuset.CPUSet) bool {
	return old.CPUs.Size() == need.CPUs && old.Policy == need.Policy &&
		old.RequestMilli == need.RequestMilli && old.CPUs.IsSubsetOf(online) &&
		old.CPUs.Intersection(reserved).IsEmpty()
}

// conflict explains why cpus cannot be taken in the current state, or "".
func conflict(cpus, online cpuset.CPUSet, st cpualloc.State) string {
	if off := cpus.Difference(online); !off.IsEmpty() {
		return fmt.Sprintf("cpus %s are offline or do not exist", off)
	}
	if both := cpus.Intersection(st.Exclusive); !both.IsEmpty() {
		return fmt.Sprintf("cpus %s are already held exclusively by another workload", both)
	}
	return ""
}

func claim(st cpualloc.State, a Assignment, need CPUNeed) cpualloc.State {
	return st.With(cpualloc.Result{CPUs: a.CPUs},
		cpualloc.Request{CPUs: a.CPUs.Size(), Policy: a.Policy, RequestMilli: need.RequestMilli})
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

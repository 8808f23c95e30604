package decide

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/moveplan"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Assign keeps every previous assignment that still matches its workload's need,
// then applies the decisions made elsewhere, then allocates the rest, each in
// name order, so the result depends only on inputs. What is in force comes
// first: a new decision that collides with CPUs a workload already holds is
// refused (CPUSetConflict) rather than moving that workload. Beside a
// kubelet (kube), the CPUs it holds alone are never given, a kept
// assignment or a decision that overlaps them is refused with
// KubeletCPUConflict (the kubelet wins), and a kept one is then chosen
// again. Memory is a dimension of each placement (memory.go): what the
// kubelet's memory manager and every assignment kept hold on their nodes is
// taken first, a decision's nodes are widened to a group that holds its
// memory or it is refused, and an allocation's nodes must hold it.
func Assign(t *topology.Topology, reserved cpuset.CPUSet, kube Kubelet, needs map[string]workload.CPUNeed,
	prev map[string]workload.Assignment) (map[string]workload.Assignment, []workload.Problem) {
	out, _, _, problems := assign(t, reserved, kube, needs, prev, nil, nil)
	return out, problems
}

// Holdings is, by workload, the memory each NUMA node holds for it.
type Holdings map[string]map[int]cpualloc.Memory

// assign is Assign, with the memory each assignment holds where, and the
// moves it made: with movable workloads (Moves.movable), an allocation
// that fails, or spans more nodes than on an empty machine, may move them
// (moves.go).
func assign(t *topology.Topology, reserved cpuset.CPUSet, kube Kubelet, needs map[string]workload.CPUNeed,
	prev map[string]workload.Assignment, movable map[string]bool, resident map[string]map[int]uint64) (map[string]workload.Assignment, Holdings, []Move, []workload.Problem) {
	out := map[string]workload.Assignment{}
	holds := Holdings{}
	free := freeMemory(t, kube)
	// holdOn accounts what a workload placed on group holds there.
	holdOn := func(name string, a *workload.Assignment) {
		if free == nil || a.Memory.IsZero() {
			return
		}
		group, held := memGroup(t, *a), a.MemHeld
		if !heldIs(held, group, a.Memory) {
			held = cpualloc.Hold(group, free, a.Memory)
		}
		holds[name] = held
		free = cpualloc.Subtract(free, held)
		a.MemHeld = nil
		if len(group) > 1 {
			a.MemHeld = held // a group's share is kept (workload.Assignment.MemHeld)
		}
	}
	needs, problems := refuseDecisions(t, reserved, needs)
	state := cpualloc.State{BurstMilli: map[int]int64{}}
	online := t.CPUSet()
	owned := kube.Owned(online)
	kubeletProblem := func(name, msg string) {
		if kube.Unknown == "" { // an unreadable checkpoint is told once, for the node
			problems = append(problems, workload.Problem{Workload: name, Reason: "KubeletCPUConflict", Message: msg})
		}
	}

	// Pass 1: kept assignments (a decided workload's only while its
	// decision stands) claim their CPUs first; those whose count changed
	// claim them too, to be resized below.
	var resizing []string
	for _, name := range slices.Sorted(maps.Keys(needs)) {
		need := needs[name]
		old, ok := prev[name]
		if !need.Exclusive || !ok {
			continue
		}
		// Devices named or gone since it was placed: chosen again next to
		// them, as for a new policy.
		sameNear := slices.Equal(old.Near, need.Near)
		fits := sameNear && stillFits(old, need, online, reserved)
		resize := sameNear && !fits && resizable(old, need, online, reserved)
		if !need.Decided.IsEmpty() {
			if !resized(need) && old.Decided.IsEmpty() {
				fits = old.CPUs.Equals(need.Decided) && old.Policy == need.Policy && old.RequestMilli == need.RequestMilli
				resize = false
			} else {
				// The decided CPUs, or a set resized from them.
				fits, resize = fits && decidedFrom(old, need), resize && decidedFrom(old, need)
			}
		}
		if msg := kubeletConflict(old.CPUs, owned, kube.Unknown); msg != "" {
			kubeletProblem(name, msg+"; Locus chooses its CPUs again")
			continue
		}
		if !fits && !resize || conflict(old.CPUs, online, state) != "" {
			continue
		}
		state = claim(state, old, need)
		kept := old
		kept.Memory = need.Memory
		out[name] = kept
		if resize {
			resizing = append(resizing, name)
		}
	}
	// The memory of what is kept is held where it is: a workload on one
	// node first, so that a group of nodes' holding fills what is left
	// around them, as the kernel's allocations would.
	for _, name := range keptByGroup(t, out) {
		a := out[name]
		holdOn(name, &a)
		out[name] = a
	}
	// Pass 2: new decisions made elsewhere, so allocations route around them.
	for _, name := range slices.Sorted(maps.Keys(needs)) {
		need := needs[name]
		if _, done := out[name]; done || !need.Exclusive || need.Decided.IsEmpty() {
			continue
		}
		if msg := kubeletConflict(need.Decided, owned, kube.Unknown); msg != "" {
			kubeletProblem(name, msg+"; the pod runs in the shared pool")
			continue
		}
		if msg := conflict(need.Decided, online, state); msg != "" {
			problems = append(problems, workload.Problem{Workload: name, Reason: "CPUSetConflict", Message: msg})
			continue
		}
		if msg := floorConflict(t, reserved, owned, state, need); msg != "" {
			problems = append(problems, workload.Problem{Workload: name, Reason: ReasonResourceStatusRefused, Message: msg})
			continue
		}
		group, ok := cpualloc.MemGroup(t, free, decidedBase(t, need), need.Memory)
		if !ok && need.Check != nil {
			problems = append(problems, workload.Problem{Workload: name, Reason: ReasonResourceStatusRefused,
				Message: fmt.Sprintf("annotation %s: CPUs %s: %s, nor on any nearer group of nodes; running in the shared pool",
					workload.AnnotationResourceStatus, need.Decided, shortOf(group, free, need.Memory))})
			continue
		}
		a := workload.Assignment{CPUs: need.Decided, Policy: need.Policy,
			RequestMilli: need.RequestMilli, MemNodes: spillOf(t, need.Decided, group), Memory: need.Memory, Near: need.Near}
		holdOn(name, &a)
		state = claim(state, a, need)
		out[name] = a
		if resized(need) {
			resizing = append(resizing, name)
		}
	}
	// Pass 2b: resize in place, shrinks before grows so a grow finds the
	// CPUs a shrink released.
	sort.Strings(resizing)
	for _, grow := range []bool{false, true} {
		for _, name := range resizing {
			need, a := needs[name], out[name]
			if (need.CPUs > a.CPUs.Size()) != grow || kube.Unknown != "" {
				continue
			}
			req := cpualloc.Request{CPUs: need.CPUs, Policy: need.Policy, NUMAStrategy: need.NUMAStrategy,
				RequestMilli: need.RequestMilli}
			state.Free = nil // the memory it holds is held already
			if free != nil && !a.Memory.IsZero() {
				req.MemNodes = memGroup(t, a) // and stays there: a grow takes CPUs beside it
			}
			res, err := cpualloc.Resize(t, state, reserved.Union(owned), a.CPUs, req)
			if err != nil {
				problems = append(problems, workload.Problem{Workload: name, Reason: ReasonResizeInfeasible,
					Message: fmt.Sprintf("resize to %d CPUs does not fit: %v; CPUs %s are kept until it does", need.CPUs, err, a.CPUs)})
				continue
			}
			state = state.Without(cpualloc.Result{CPUs: a.CPUs}, cpualloc.Request{CPUs: a.CPUs.Size(), Policy: a.Policy})
			// Its memory stays where it is, and is allowed beside the
			// nodes of CPUs it grew onto.
			mems := cpuset.New(memGroup(t, a)...).Union(cpuset.New(t.NodesOf(res.CPUs)...)).List()
			a = workload.Assignment{CPUs: res.CPUs, Policy: need.Policy, RequestMilli: need.RequestMilli, Decided: need.Decided,
				MemNodes: spillOf(t, res.CPUs, mems), Memory: a.Memory, MemHeld: a.MemHeld, Near: a.Near}
			if len(mems) > 1 && a.MemHeld == nil && holds[name] != nil {
				a.MemHeld = holds[name] // what it held on its one node, now one of several
			}
			state = claim(state, a, need)
			out[name] = a
		}
	}
	// Pass 3: allocate what is left. One plan of moves at most per
	// decision: each is made on the state before it, whose moved memory
	// has not followed yet, and the planner's time is bounded per plan.
	var moves []Move
	planned := false
	for _, name := range slices.Sorted(maps.Keys(needs)) {
		need := needs[name]
		if _, done := out[name]; done || !need.Exclusive || !need.Decided.IsEmpty() || kube.Unknown != "" {
			continue
		}
		state.Free = free
		res, err := cpualloc.Allocate(t, state, reserved.Union(owned), cpualloc.Request{CPUs: need.CPUs,
			Policy: need.Policy, NUMAStrategy: need.NUMAStrategy, RequestMilli: need.RequestMilli, Memory: need.Memory,
			Near: need.Near})
		asked := false
		var planErr error
		if movable != nil && !planned && need.Policy != cpualloc.StaticBurst && (err != nil || len(res.NUMANodes) > 1) {
			asked, planned = true, true
			var plan moveplan.Plan
			if plan, planErr = planRoom(t, state, reserved.Union(owned), out, prev, holds, movable, resident, need); planErr == nil && len(plan.Moves) > 0 {
				for _, mv := range plan.Moves {
					a := out[mv.Workload]
					state = state.Without(cpualloc.Result{CPUs: a.CPUs}, cpualloc.Request{CPUs: a.CPUs.Size(), Policy: a.Policy})
					if h, ok := holds[mv.Workload]; ok && free != nil {
						free = cpualloc.GiveBack(free, h)
						delete(holds, mv.Workload)
					}
					a = workload.Assignment{CPUs: mv.To, Policy: a.Policy, RequestMilli: a.RequestMilli,
						MemNodes: spillOf(t, mv.To, moveGroup(mv)), Memory: a.Memory}
					holdOn(mv.Workload, &a)
					state = claim(state, a, workload.CPUNeed{RequestMilli: a.RequestMilli})
					out[mv.Workload] = a
					moves = append(moves, Move{Move: mv, For: name, ForNodes: plan.Result.NUMANodes})
				}
				state.Free = free
				res, err = plan.Result, nil
			}
		}
		if err != nil {
			problems = append(problems, workload.Problem{Workload: name, Reason: ReasonCPUAllocationFailed, Message: moveWhy(err.Error(), asked, planErr)})
			continue
		}
		// The agent is the last word on its node: the nodes must hold the
		// memory, whatever the allocator's result says.
		group, ok := cpualloc.MemGroup(t, free, allocatedBase(t, res), need.Memory)
		if !ok {
			problems = append(problems, workload.Problem{Workload: name, Reason: ReasonCPUAllocationFailed,
				Message: fmt.Sprintf("CPUs %s: %s, nor on any nearer group of nodes", res.CPUs, shortOf(group, free, need.Memory))})
			continue
		}
		a := workload.Assignment{CPUs: res.CPUs, Policy: need.Policy,
			RequestMilli: need.RequestMilli, MemNodes: spillOf(t, res.CPUs, group), Memory: need.Memory, Near: need.Near}
		holdOn(name, &a)
		state = claim(state, a, need)
		out[name] = a
	}
	return out, holds, moves, problems
}

// ReasonCPUAllocationFailed is the problem of a workload whose CPUs, memory
// or huge pages fit nowhere on the node: it runs in the shared pool.
const ReasonCPUAllocationFailed = "CPUAllocationFailed"

// stillFits says whether an old assignment serves the workload's current need.
func stillFits(old workload.Assignment, need workload.CPUNeed, online, reserved cpuset.CPUSet) bool {
	return old.CPUs.Size() == need.CPUs && old.Policy == need.Policy &&
		old.RequestMilli == need.RequestMilli && old.CPUs.IsSubsetOf(online) &&
		old.CPUs.Intersection(reserved).IsEmpty()
}

// ReasonResizeInfeasible is the problem of a workload whose CPU count
// grew (or changed by a count its policy cannot serve) beyond what the
// node has free beside the CPUs it holds: it keeps them meanwhile.
const ReasonResizeInfeasible = "ResizeInfeasible"

// resizable says whether an old assignment can be grown or shrunk to the
// workload's new count in place: same policy and request, CPUs still
// online and not reserved, and a policy whose CPUs are its own (a
// static-burst set is chosen again).
func resizable(old workload.Assignment, need workload.CPUNeed, online, reserved cpuset.CPUSet) bool {
	return old.CPUs.Size() != need.CPUs && !old.CPUs.IsEmpty() && old.Policy == need.Policy &&
		need.Policy != cpualloc.StaticBurst && old.RequestMilli == need.RequestMilli &&
		old.CPUs.IsSubsetOf(online) && old.CPUs.Intersection(reserved).IsEmpty()
}

// resized says whether a decided workload's count is no longer the
// decision's: it was resized in place since.
func resized(need workload.CPUNeed) bool {
	return !need.Decided.IsEmpty() && need.CPUs != need.Decided.Size() && need.Policy != cpualloc.StaticBurst
}

// decidedFrom says whether old is the workload's decision in force: the
// decided CPUs, or a set resized from them.
func decidedFrom(old workload.Assignment, need workload.CPUNeed) bool {
	if old.Policy != need.Policy || old.RequestMilli != need.RequestMilli {
		return false
	}
	return old.CPUs.Equals(need.Decided) || old.Decided.Equals(need.Decided)
}

// conflict explains why cpus cannot be taken in the current state, or "".
func conflict(cpus, online cpuset.CPUSet, st cpualloc.State) string {
	if off := cpus.Difference(online); !off.IsEmpty() {
		return fmt.Sprintf("cpus %s are offline or do not exist", off)
	}
	if both := st.Exclusive.Overlap(cpus); !both.IsEmpty() {
		return fmt.Sprintf("cpus %s are already held exclusively by another workload", both)
	}
	return ""
}

func claim(st cpualloc.State, a workload.Assignment, need workload.CPUNeed) cpualloc.State {
	return st.With(cpualloc.Result{CPUs: a.CPUs},
		cpualloc.Request{CPUs: a.CPUs.Size(), Policy: a.Policy, RequestMilli: need.RequestMilli})
}

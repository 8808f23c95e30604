package decide

import (
	"maps"
	"time"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/rebalance"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Observation is what one reconcile saw of the node: nothing in it is read
// again by Decide, so equal observations give equal decisions.
type Observation struct {
	Topology  *topology.Topology
	Config    *workload.Config
	Workloads []workload.Workload
	// Leases are the CPUs `locus run` holds, as the checkpoint says, by
	// run; Dropped the leases of runs that are gone, dropped by this
	// reconcile.
	Leases, Dropped map[string]Lease
	// Held are, for a decision made beside the agent (`locus run`'s, which
	// decides its own lease), the agent's assignments in force: routed
	// around as leases are.
	Held map[string]workload.Assignment
	// Prepared says which cgroups exist and may be written: a cgroup still
	// being created, or whose workload cannot start, is left alone.
	Prepared map[string]bool
	// Problems are those found while observing (a cgroup missing, a removal
	// pending); Decide adds its own.
	Problems []workload.Problem
	// Kubelet is what the kubelet's CPU manager holds (kubelet.go).
	Kubelet           Kubelet
	V1SoftLimitForLow bool
	// ThrottleNotBelowRequest keeps memory.high at or above the request
	// (memqos.Options).
	ThrottleNotBelowRequest bool
	// CPUIdle says the kernel gives cgroups cpu.idle: a demoted workload
	// gets it, else the lowest cpu.shares.
	CPUIdle bool
	// Burst is what CPU Burst reads of the node (quotaburst.go).
	Burst BurstObservation
	// Balanced is where the NUMA balancer places the groups of the pools
	// (balanced.go).
	Balanced Balanced
	// Now is the reconcile's clock: when a move made now is made, against
	// MoveInterval.
	Now time.Time
	// Usage is the CPU time each workload holding CPUs has used so far, by
	// name, read by the shell only with Config.Rebalance (rebalance.go).
	Usage map[string]time.Duration
	// Resident is, per movable workload, its resident memory in bytes on
	// each NUMA node as last read (memory.numa_stat): the move planner's
	// cost of moving it. Not part of the decision's input key: it only
	// orders plans of equal CPUs, made when something does not fit.
	Resident map[string]map[int]uint64
	// NarrowingMigrates says the kernel migrates a cgroup's memory inside a
	// write that narrows its cpuset.mems (cgroup v2, where memory_migrate
	// is always on; the agent never turns it on in v1): a moved workload's
	// widened cpuset.mems is then never narrowed while it runs
	// (moves_mems.go).
	NarrowingMigrates bool
}

// Memory is what the agent remembers between reconciles: the assignments
// in force (kept in the checkpoint), the problems already told, and the last
// decision with what it was computed from.
type Memory struct {
	Assignments map[string]workload.Assignment
	Problems    map[string]bool // workload, reason and message of each problem told
	Last        *Computed
	Burst       BurstMemory
	// Moved is when each workload was last moved so that another fits,
	// while that is less than MoveInterval ago.
	Moved map[string]time.Time
	// Rebalance is the rebalancer's state: the last sample of use, the
	// imbalance watched, the moves it made (rebalance.go).
	Rebalance rebalance.State
	// Following are the moved workloads whose cpuset.mems still allows the
	// nodes they left (moves_mems.go), kept in the checkpoint.
	Following map[string]workload.MemsFollowing
}

// Computed is a decision and its input. The decision is a pure function of
// its input, so an observation whose input is the same (at rest: same
// topology, config, assignments and leases) reuses it instead of deciding
// the whole node again.
type Computed struct {
	topo    *topology.Topology
	cfg     *workload.Config
	key     string
	Desired Desired
	// qos are its workloads' QoS steps, which the next decision reuses
	// for the workloads that did not change when the node's did.
	qos *qosMemo
}

// Steps is c without its decision: a decision made with it decides the
// whole node again, but reuses the QoS steps of the workloads that read the
// same as then. It serves a decision whose workloads may differ from c's
// under the same config (a container about to be created, which the key
// does not see), where reusing c whole would leave that container out.
func (c *Computed) Steps() *Computed {
	if c == nil {
		return nil
	}
	return &Computed{qos: c.qos}
}

// Ready is everything the shell must do after one reconcile: save the
// assignments when they changed, write and restore cgroup files, emit the
// Events, publish the status, and remember Memory.
type Ready struct {
	Desired Desired // assignments without the leases
	// Save is set when the checkpoint's assignments must be saved: they
	// changed, or leases were dropped.
	Save bool
	// Events are told as soon as the decision is saved (CPUs assigned and
	// released, leases dropped); Warnings once the writes are done (the
	// problems new since the last reconcile).
	Events, Warnings []eventlog.Event
	Problems         []workload.Problem // every problem of this reconcile, by workload
	Memory           Memory

	prepared map[string]bool
	held     bool
	// What the problems are drawn from, for Later.
	observed, decided []workload.Problem
	told              map[string]bool
}

// Decide is the agent's one decision: from what was observed and what it
// remembers to what must be done. It does no I/O and reads no clock.
func Decide(obs Observation, mem Memory) Ready {
	in := obs.Input(mem.Assignments)
	var moved map[string]time.Time
	in.Moves.Recent, moved = recentMoves(mem.Moved, obs.Now, mem.Assignments)
	in.Moves.Enabled, in.Moves.Writable, in.Moves.Resident = obs.Config.MovesEnabled, writableMovable(obs), obs.Resident
	var rebalancing []Move
	in.Previous, rebalancing, mem.Rebalance = rebalanced(obs, in, mem.Rebalance)
	key := inputKey(in.Previous, in.Workloads) + "\x00" + in.Kubelet.key() + "\x00" + in.Moves.key()
	var d Desired
	if m := mem.Last; m != nil && m.topo == obs.Topology && m.cfg == obs.Config && m.key == key {
		d = m.Desired
		d.Moves = nil // made, and told, when it was computed
	} else {
		var last *qosMemo
		if mem.Last != nil {
			last = mem.Last.qos
		}
		var qos *qosMemo
		d, qos = compute(in, last)
		d.Moves = append(d.Moves, keptRebalance(rebalancing, d.Assignments)...)
		for _, mv := range d.Moves {
			moved[mv.Workload] = obs.Now
		}
		for name := range d.Assignments {
			if decidedElsewhere(name) {
				delete(d.Assignments, name)
			}
		}
		mem.Last = &Computed{topo: obs.Topology, cfg: obs.Config, key: key, Desired: d, qos: qos}
	}
	var burst BurstMemory
	d, burst = quotaBurst(in, d, obs.Burst, mem.Burst)
	d = balance(obs.Topology, in.Workloads, d, obs.Balanced)
	var following map[string]workload.MemsFollowing
	var narrowed []eventlog.Event
	d, following, narrowed = followMems(obs, in.UnrestrictedMems, mem.Assignments, d, mem.Following)
	r := Ready{Desired: d, prepared: prepared(obs), held: obs.Config.MemQoSHeld != ""}
	r.Save = len(obs.Dropped) > 0 || !SameAssignments(mem.Assignments, d.Assignments) || !sameRaises(mem.Burst.Raises, burst.Raises) ||
		!sameFollowing(mem.Following, following)
	mem.Burst, mem.Following = burst, following
	mem.Moved = moved
	r.Events = append(droppedEvents(obs.Dropped), assignmentEvents(obs.Topology, mem.Assignments, d.Assignments, d.Moves)...)
	r.Events = append(r.Events, narrowed...)
	r.observed, r.decided, r.told = obs.Problems, d.Problems, mem.Problems
	mem.Assignments = d.Assignments
	r.Memory = mem
	return r.Later(nil)
}

// Later adds the problems a runner finds once the decision is known (the
// locality runner's, which reads the decided NUMA nodes), so that they are
// told, and remembered, with the others.
func (r Ready) Later(late []workload.Problem) Ready {
	r.observed = append(r.observed[:len(r.observed):len(r.observed)], late...)
	r.Problems = allProblems(r.observed, r.decided)
	r.Warnings, r.Memory.Problems = problemEvents(r.Problems, r.told)
	return r
}

// prepared are the cgroups that may be written: those observed prepared,
// and the balancer's that are no workload's.
func prepared(obs Observation) map[string]bool {
	b := obs.Balanced
	if len(b.Cgroups) == 0 && len(b.Released) == 0 {
		return obs.Prepared
	}
	out := make(map[string]bool, len(obs.Prepared)+len(b.Cgroups)+len(b.Released))
	maps.Copy(out, obs.Prepared)
	for cg := range b.Cgroups {
		out[cg] = true
	}
	for _, cg := range b.Released {
		out[cg] = true
	}
	return out
}

// Writes are the files of Desired to write and restore: only in cgroups
// that are prepared, and no memory or CPU QoS file while their
// configuration (resource-qos-config) is held.
func (r Ready) Writes() ([]cgroupfile.Op, []cgroupfile.Target) {
	held := func(k cgroupfile.Knob) bool {
		_, ok := memqos.Info(memqos.Knob(k))
		return r.held && (ok || isCPUQoSKnob(k) || k == cgroupfile.CPUBurst || k == cgroupfile.CPUQuota)
	}
	keep := func(cg string, k cgroupfile.Knob) bool { return r.prepared[cg] && !held(k) }
	return kept(r.Desired.Ops, func(op cgroupfile.Op) bool { return keep(op.Cgroup, op.Knob) }),
		kept(r.Desired.Restores, func(t cgroupfile.Target) bool { return keep(t.Cgroup, t.Knob) })
}

// kept is the elements of all that keep accepts. Nearly every op and
// restore is kept, most often all of them: then it is all itself, capped
// so that an append copies, where a copy of every op was about 4 % of the
// bytes the agent allocated under a 300-pod churn. Otherwise it is sized
// once, not grown by copies.
func kept[T any](all []T, keep func(T) bool) []T {
	first := -1
	for i, x := range all {
		if !keep(x) {
			first = i
			break
		}
	}
	if first < 0 {
		return all[:len(all):len(all)]
	}
	out := make([]T, first, len(all))
	copy(out, all[:first])
	for _, x := range all[first+1:] {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// From is the memory with what the checkpoint keeps in force: the
// assignments and CPU Burst's quota raises.
func (m Memory) From(assignments map[string]workload.Assignment, raises map[string]cpuburst.Raise, following map[string]workload.MemsFollowing) Memory {
	m.Assignments, m.Burst.Raises, m.Following = assignments, raises, following
	return m
}

// Kept is what the checkpoint keeps of the decision: the assignments, CPU
// Burst's quota raises and the moved workloads whose memory follows.
func (r Ready) Kept() (map[string]workload.Assignment, map[string]cpuburst.Raise, map[string]workload.MemsFollowing) {
	return r.Desired.Assignments, r.Memory.Burst.Raises, r.Memory.Following
}

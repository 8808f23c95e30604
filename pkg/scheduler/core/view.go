package core

import (
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// NodeView is one node's CPU state at one moment. It is immutable: a change
// makes a new view, so a scheduling cycle can keep one without locks (only
// the placements it remembers are guarded, internally).
type NodeView struct {
	Name string
	// Err says why the node cannot take pods with CPUs of their own (no,
	// unreadable NodeResourceTopology); the rest is then empty.
	Err *Unfit
	// Reserved are the CPUs the agent never hands out (see State for who
	// holds the others).
	Reserved cpuset.CPUSet
	// Holdings counts the pods holding CPUs on the node.
	Holdings int
	// Heartbeat is when the agent last wrote the report (zero: it does not
	// say; see Fresh).
	Heartbeat time.Time

	machine    *machine
	freeMilli  int64 // allocatable CPU nobody holds (static-burst: the room left)
	allocMilli int64 // allocatable CPU: online, not reserved, not isolated

	memo *memo // placements made on this view (place); shared by empty views

	bits  []uint64      // the CPUs held exclusively, as bits (see tally)
	burst map[int]int64 // the static-burst load per CPU, nil for none
	// free is the memory and huge pages each NUMA node can still give
	// pinned pods (the report's available less the in-cycle holdings'):
	// nil when the report counts no memory. Shared: never changed.
	free map[int]cpualloc.Memory
	// movable is the report's count of CPUs held by pods that may move, by
	// NUMA node (afterMoves); nil for none. Shared: never changed.
	movable map[int]int
	devices deviceZones // the report's; shared, never changed
}

// Topology is the node's machine, nil when Err is set. It is shared: do not
// change it.
func (v *NodeView) Topology() *topology.Topology {
	if v.machine == nil {
		return nil
	}
	return v.machine.topo
}

// FreeMilli is the allocatable CPU (millicores) nobody holds alone, minus
// the static-burst requests on it.
func (v *NodeView) FreeMilli() int64 { return v.freeMilli }

// State is who holds what on the node: the report's holdings of pods
// that still exist, the decisions on the pods bound to the node, and the
// allocations assumed here. It is made each time it is asked for:
// placements read the view's bits instead (a set of a hundred CPUs made
// for every changed view was most of a cycle's garbage), and nothing
// asks twice, so keeping it made every view larger by what it would
// keep. Do not change its maps, which are the view's.
func (v *NodeView) State() cpualloc.State {
	return cpualloc.State{Exclusive: cpualloc.BitsOfWords(v.bits), BurstMilli: v.burst, Free: v.free}
}

func sameHolding(a, b workload.Assignment) bool {
	burstA, burstB := a.Policy == cpualloc.StaticBurst, b.Policy == cpualloc.StaticBurst
	return a.CPUs.Equals(b.CPUs) && burstA == burstB && (!burstA || a.RequestMilli == b.RequestMilli)
}

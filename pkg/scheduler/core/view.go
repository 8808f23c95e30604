package core

import (
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpuset"
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
	// Reserved are the CPUs the agent never hands out; State who holds
	// what: the report's holdings of pods that still exist, the decisions
	// on the pods bound to the node, and the allocations assumed here.
	Reserved cpuset.CPUSet
	State    cpualloc.State
	// Holdings counts the pods holding CPUs on the node.
	Holdings int
	// Heartbeat is when the agent last wrote the report (zero: it does not
	// say; see Fresh).
	Heartbeat time.Time

	machine    *machine
	freeMilli  int64 // allocatable CPU nobody holds (static-burst: the room left)
	allocMilli int64 // allocatable CPU: online, not reserved, not isolated

	memo *memo // placements made on this view (place); shared by empty views
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
// the static-burst requests on it; AllocatableMilli all allocatable CPU.
func (v *NodeView) FreeMilli() int64        { return v.freeMilli }
func (v *NodeView) AllocatableMilli() int64 { return v.allocMilli }

// newView applies the holdings, each once (the same pod's report and
// decision agreeing count once; disagreeing, both count, as both may be
// in force until the agent settles).
func newView(name string, r *report, hs []workload.Assignment) *NodeView {
	if r == nil {
		return &NodeView{Name: name, Err: unfit(NoTopology, "no NodeResourceTopology named %s", name)}
	}
	if r.err != nil {
		return &NodeView{Name: name, Err: r.err}
	}
	st := cpualloc.State{Exclusive: cpuset.New(), BurstMilli: map[int]int64{}}
	var exclusive []int
	for _, h := range hs {
		if h.Policy != cpualloc.StaticBurst {
			exclusive = append(exclusive, h.CPUs.UnsortedList()...)
			continue
		}
		st = st.With(cpualloc.Result{CPUs: h.CPUs}, cpualloc.Request{CPUs: h.CPUs.Size(), Policy: h.Policy, RequestMilli: h.RequestMilli})
	}
	// One union for every exclusive holding: cheaper than a With each.
	st.Exclusive = cpuset.New(exclusive...)
	v := &NodeView{Name: name, Reserved: r.reserved, State: st, Holdings: len(hs), Heartbeat: r.heartbeat,
		machine: r.machine, memo: &memo{}}
	if len(hs) == 0 {
		// Nothing held: the same state as every other empty node of this
		// machine with these reserved CPUs, so the same placements.
		v.memo = r.machine.emptyMemo(r.reserved)
	}
	topo := r.machine.topo
	for _, c := range topo.CPUs {
		if r.reserved.Contains(c.ID) || topo.Isolated.Contains(c.ID) {
			continue
		}
		v.allocMilli += 1000
		if !st.Exclusive.Contains(c.ID) {
			v.freeMilli += max(0, 1000-st.BurstMilli[c.ID])
		}
	}
	return v
}

func sameHolding(a, b workload.Assignment) bool {
	burstA, burstB := a.Policy == cpualloc.StaticBurst, b.Policy == cpualloc.StaticBurst
	return a.CPUs.Equals(b.CPUs) && burstA == burstB && (!burstA || a.RequestMilli == b.RequestMilli)
}

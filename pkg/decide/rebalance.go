package decide

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/moveplan"
	"github.com/locus-project/locus/pkg/rebalance"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// rebalanced takes one sample of what the pinned workloads used
// (Observation.Usage) into the rebalancer (pkg/rebalance), with moves and
// rebalancing both switched on. When it moves a workload off a NUMA node
// busier than another, it returns the assignments in force with that
// workload on free CPUs of the other node, for Compute to keep as it keeps
// any assignment, and the move, for the decision to tell and write first.
// The workloads that may move are those a move to make room may move
// (Moves.movable: opted in, written by this decision, not moved within
// MoveInterval).
func rebalanced(obs Observation, in Input, st rebalance.State) (map[string]workload.Assignment, []Move, rebalance.State) {
	prev := in.Previous
	if obs.Config == nil || !obs.Config.MovesEnabled || !obs.Config.Rebalance || in.Kubelet.Unknown != "" || obs.Topology == nil {
		return prev, nil, rebalance.State{}
	}
	t := obs.Topology
	reserved, _, _ := in.Kubelet.needs(in.Reserved, nil)
	reserved = reserved.Union(in.Kubelet.Owned(t.CPUSet()))
	movable := in.Moves.movable(in.Kubelet, in.Workloads)
	s := rebalance.Sample{Now: obs.Now}
	for _, n := range t.Nodes {
		if !n.CPUs.Difference(reserved).IsEmpty() {
			s.Nodes = append(s.Nodes, n.ID)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(prev)) {
		a := prev[name]
		used, ok := obs.Usage[name]
		if !ok || a.CPUs.IsEmpty() || a.Policy == cpualloc.StaticBurst {
			continue
		}
		node := -1
		if nodes := t.NodesOf(a.CPUs); len(nodes) == 1 {
			node = nodes[0]
		}
		s.Holdings = append(s.Holdings, rebalance.Holding{Name: name, Node: node, Movable: movable[name], Used: used})
	}
	targets := map[string]cpuset.CPUSet{}
	fits := func(name string, node int) bool {
		cpus, ok := placeOn(t, reserved, in.Kubelet, prev, name, node)
		targets[name] = cpus
		return ok
	}
	st, m := rebalance.Step(rebalance.Default, st, s, fits)
	if m == nil {
		return prev, nil, st
	}
	a, to := prev[m.Workload], targets[m.Workload]
	out := maps.Clone(prev)
	out[m.Workload] = workload.Assignment{CPUs: to, Policy: a.Policy, RequestMilli: a.RequestMilli, Memory: a.Memory, Near: a.Near}
	mv := Move{Move: moveplan.Move{Workload: m.Workload, From: a.CPUs, To: to, FromNodes: t.NodesOf(a.CPUs), ToNodes: t.NodesOf(to)},
		Rebalance: m}
	return out, []Move{mv}, st
}

// placeOn is where the workload name would go on NUMA node node: CPUs
// free there with every other assignment in force kept, placed by the
// allocator under its policy, with its memory free there too.
func placeOn(t *topology.Topology, reserved cpuset.CPUSet, kube Kubelet, prev map[string]workload.Assignment, name string, node int) (cpuset.CPUSet, bool) {
	a := prev[name]
	st := cpualloc.State{BurstMilli: map[int]int64{}}
	free := freeMemory(t, kube)
	for _, other := range slices.Sorted(maps.Keys(prev)) {
		if o := prev[other]; other != name {
			st = claim(st, o, workload.CPUNeed{RequestMilli: o.RequestMilli})
			if free != nil && !o.Memory.IsZero() {
				free = cpualloc.Subtract(free, cpualloc.Hold(memGroup(t, o), free, o.Memory))
			}
		}
	}
	st.Free = free
	elsewhere := t.CPUSet()
	for _, n := range t.Nodes {
		if n.ID == node {
			elsewhere = elsewhere.Difference(n.CPUs)
		}
	}
	res, err := cpualloc.Allocate(t, st, reserved.Union(elsewhere), cpualloc.Request{CPUs: a.CPUs.Size(), Policy: a.Policy,
		RequestMilli: a.RequestMilli, Memory: a.Memory})
	if err != nil || res.CPUs.Size() != a.CPUs.Size() || !slices.Equal(t.NodesOf(res.CPUs), []int{node}) {
		return cpuset.New(), false
	}
	return res.CPUs, true
}

// keptRebalance is the rebalancing moves the decision carried out: a
// workload Compute did not keep on its new CPUs (they became reserved in
// the meantime, say) was not moved.
func keptRebalance(moves []Move, assigned map[string]workload.Assignment) []Move {
	var out []Move
	for _, m := range moves {
		if a, ok := assigned[m.Workload]; ok && a.CPUs.Equals(m.To) {
			out = append(out, m)
		}
	}
	return out
}

// rebalanceMessage tells a rebalancing move: from where to where, and the
// two nodes' use that made it.
func rebalanceMessage(m Move) string {
	r := m.Rebalance
	msg := fmt.Sprintf("moved from CPUs %s (NUMA nodes %v) to CPUs %s (NUMA nodes %v) to even out the NUMA nodes' use: "+
		"pinned workloads used %.1f CPUs on node %d and %.1f on node %d for a sustained time, this one %.1f; "+
		"its memory follows to NUMA nodes %v (pages migrated by the memory locality worker within its stall budget; cpuset.mems allows the nodes it left too until they have)",
		m.From, m.FromNodes, m.To, m.ToNodes, r.Hot, r.From, r.Cold, r.To, r.Use, moveGroup(m.Move))
	if len(msg) > maxEventMessage {
		msg = strings.ToValidUTF8(msg[:maxEventMessage-3], "") + "..."
	}
	return msg
}

package decide

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Events carry no time: the shell stamps them when it emits them, so that
// Decide reads no clock.
func event(typ, reason, name, format string, args ...any) eventlog.Event {
	return eventlog.Event{Type: typ, Reason: reason, Workload: name, Message: fmt.Sprintf(format, args...)}
}

func droppedEvents(dropped map[string]Lease) []eventlog.Event {
	var out []eventlog.Event
	for _, name := range slices.Sorted(maps.Keys(dropped)) {
		l := dropped[name]
		out = append(out, event(eventlog.Normal, "LeaseDropped", "", "lease %s of a `locus run` that is gone dropped: cgroup %s holds no process; CPUs %q are free again",
			name, l.Cgroup, l.Assignment.CPUs.String()))
	}
	return out
}

// assignmentEvents tells each workload moved (Repinned, in the order of
// the moves), each other whose CPUs changed since the assignments in
// force, and each that no longer holds any.
func assignmentEvents(t *topology.Topology, prev, next map[string]workload.Assignment, moves []Move) []eventlog.Event {
	var out []eventlog.Event
	moved := map[string]bool{}
	for _, m := range moves {
		moved[m.Workload] = true
		msg := repinnedMessage(m)
		if m.Rebalance != nil {
			msg = rebalanceMessage(m)
		}
		out = append(out, event(eventlog.Normal, ReasonRepinned, m.Workload, "%s", msg))
	}
	for _, name := range slices.Sorted(maps.Keys(next)) {
		n := next[name]
		if p, ok := prev[name]; moved[name] || ok && p.CPUs.Equals(n.CPUs) {
			continue
		}
		spill := ""
		if len(n.MemNodes) > 0 {
			spill = fmt.Sprintf(", memory on NUMA nodes %v (more than the CPUs' nodes hold)", n.MemNodes)
		}
		out = append(out, event(eventlog.Normal, "CPUsAssigned", name, "bound to CPUs %s (NUMA nodes %v), policy %s%s",
			n.CPUs, t.NodesOf(n.CPUs), n.Policy, spill))
	}
	for _, name := range slices.Sorted(maps.Keys(prev)) {
		if _, ok := next[name]; !ok {
			out = append(out, event(eventlog.Normal, "CPUsReleased", name, "CPUs %s released", prev[name].CPUs))
		}
	}
	return out
}

// allProblems joins the observed problems and the decision's, by workload;
// a lease's problems are `locus run`'s to tell, not the agent's.
func allProblems(observed, decided []workload.Problem) []workload.Problem {
	all := append([]workload.Problem(nil), observed...)
	for _, p := range decided {
		if !decidedElsewhere(p.Workload) {
			all = append(all, p)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Workload < all[j].Workload })
	return all
}

// problemEvents warns of each problem not told at the last reconcile, and
// returns the problems told now: a problem that persists is told once, one
// that goes and comes back is told again.
func problemEvents(all []workload.Problem, told map[string]bool) ([]eventlog.Event, map[string]bool) {
	var out []eventlog.Event
	seen := map[string]bool{}
	for _, p := range all {
		key := p.Workload + "\x00" + p.Reason + "\x00" + p.Message
		seen[key] = true
		if !told[key] {
			out = append(out, event(eventlog.Warning, p.Reason, p.Workload, "%s", p.Message))
		}
	}
	return out, seen
}

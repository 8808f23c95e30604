package decide

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// The CPUs decided elsewhere enter the decision as workloads of these
// names, which no workload's name can start with: `locus run`'s leases
// (Observation.Leases), and for a run, the agent's assignments
// (Observation.Held). Neither is the decision's to write or to tell, and
// neither is kept in its assignments.
const (
	LeasePrefix = "lease:"
	heldPrefix  = "held:"
)

// decidedElsewhere says whether a workload of the decision's input stands
// for CPUs decided elsewhere (a lease, or the agent's for a run).
func decidedElsewhere(name string) bool {
	return strings.HasPrefix(name, LeasePrefix) || strings.HasPrefix(name, heldPrefix)
}

// Lease is the CPUs a `locus run` holds for its command, as the checkpoint
// keeps them (by run name), and the cgroup it runs in.
type Lease struct {
	Cgroup     string
	Assignment workload.Assignment
}

// Input is the decision's input from an observation and the assignments in
// force: the workloads, and the CPUs decided elsewhere (leases, and for a
// run the agent's assignments), which are routed around. One with no CPUs
// (a run in the shared pool) holds nothing to route around and is left out.
func (o Observation) Input(previous map[string]workload.Assignment) Input {
	cfg := o.Config
	in := Input{Topology: o.Topology, Reserved: cfg.Reserved, BEPool: cfg.BEPool, Kubelet: o.Kubelet,
		UnrestrictedMems: cfg.Host.UnrestrictedMems, Previous: previous, MemQoS: cfg.MemQoS, Namespaces: cfg.Namespaces,
		MemQoSOptions: memqos.Options{V1SoftLimitForLow: o.V1SoftLimitForLow, ThrottleNotBelowRequest: o.ThrottleNotBelowRequest},
		CPUQoS:        cfg.CPUQoS, CPUKernel: cpuqos.Kernel{CPUIdle: o.CPUIdle},
		CPUBurst: cfg.CPUBurst, BurstKernel: o.Burst.Kernel}
	if len(o.Leases)+len(o.Held) == 0 {
		// Nothing decided elsewhere (a Kubernetes node): the observation's
		// own list, which the decision only reads; clipped, so that an
		// append never writes into it. A copy was 2 % of the bytes the agent
		// allocated under a 300-pod churn.
		in.Workloads = slices.Clip(o.Workloads)
		return in
	}
	in.Workloads = make([]workload.Workload, 0, len(o.Workloads)+len(o.Leases)+len(o.Held))
	in.Workloads = append(in.Workloads, o.Workloads...)
	for _, key := range slices.Sorted(maps.Keys(o.Leases)) {
		in.Workloads = appendElsewhere(in.Workloads, LeasePrefix+key, o.Leases[key].Assignment)
	}
	for _, key := range slices.Sorted(maps.Keys(o.Held)) {
		in.Workloads = appendElsewhere(in.Workloads, heldPrefix+key, o.Held[key])
	}
	return in
}

// appendElsewhere adds CPUs decided elsewhere as a workload that holds
// exactly them (CPUNeed.Decided) and has no cgroup of its own.
func appendElsewhere(ws []workload.Workload, name string, a workload.Assignment) []workload.Workload {
	if a.CPUs.IsEmpty() {
		return ws
	}
	return append(ws, workload.Workload{Name: name, CPU: workload.CPUNeed{
		Exclusive: true, CPUs: a.CPUs.Size(), Policy: a.Policy, RequestMilli: a.RequestMilli, Decided: a.CPUs,
		Memory: a.Memory, DecidedMems: a.MemNodes}})
}

// inNameOrder is ws in name order: ws itself when it is in that order
// already, as a source's snapshot is, else a sorted copy. A workload is a
// large value: copying all of them to sort them, twice a decision, was 4 %
// of the bytes the agent allocated under a 300-pod churn. The result is
// only read: it may be the caller's own slice.
func inNameOrder(ws []workload.Workload) []workload.Workload {
	for i := 1; i < len(ws); i++ {
		if ws[i-1].Name >= ws[i].Name {
			ws = slices.Clone(ws)
			sort.Slice(ws, func(i, j int) bool { return ws[i].Name < ws[j].Name })
			return ws
		}
	}
	return ws
}

// inputKey is the part of the decision's input that comes from the
// checkpoint: the previous assignments and the CPUs decided elsewhere.
func inputKey(prev map[string]workload.Assignment, ws []workload.Workload) string {
	elsewhere := map[string]workload.Assignment{}
	for _, w := range ws {
		if decidedElsewhere(w.Name) {
			elsewhere[w.Name] = workload.Assignment{CPUs: w.CPU.Decided, Policy: w.CPU.Policy, RequestMilli: w.CPU.RequestMilli,
				MemNodes: w.CPU.DecidedMems, Memory: w.CPU.Memory}
		}
	}
	raw, _ := json.Marshal(struct {
		Prev, Leases map[string]workload.Assignment
	}{prev, elsewhere})
	return string(raw)
}

// SameAssignments says whether two sets of assignments give every workload
// the same CPUs, policy, request, memory nodes and memory.
func SameAssignments(a, b map[string]workload.Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || !x.CPUs.Equals(y.CPUs) || x.Policy != y.Policy || x.RequestMilli != y.RequestMilli ||
			!slices.Equal(x.MemNodes, y.MemNodes) || x.Memory != y.Memory || !maps.Equal(x.MemHeld, y.MemHeld) ||
			!slices.Equal(x.Near, y.Near) {
			return false
		}
	}
	return true
}

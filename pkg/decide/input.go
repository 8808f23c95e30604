package decide

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// Input is the decision's input from an observation and the assignments in
// force: the workloads, and the CPUs `locus run` leases, which count as
// decided elsewhere. A lease with no CPUs (a run in the shared pool) holds
// nothing to route around and is left out.
func (o Observation) Input(previous map[string]workload.Assignment) Input {
	cfg := o.Config
	in := Input{Topology: o.Topology, Reserved: cfg.Reserved, BEPool: cfg.BEPool, Kubelet: o.Kubelet,
		UnrestrictedMems: cfg.Host.UnrestrictedMems, Previous: previous, MemQoS: cfg.MemQoS, Namespaces: cfg.Namespaces,
		MemQoSOptions: memqos.Options{V1SoftLimitForLow: o.V1SoftLimitForLow, ThrottleNotBelowRequest: o.ThrottleNotBelowRequest},
		CPUQoS:        cfg.CPUQoS, CPUKernel: cpuqos.Kernel{CPUIdle: o.CPUIdle},
		CPUBurst: cfg.CPUBurst, BurstKernel: o.Burst.Kernel}
	in.Workloads = append(in.Workloads, o.Workloads...)
	keys := make([]string, 0, len(o.Leases))
	for k := range o.Leases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		l := o.Leases[key]
		if l.Assignment.CPUs.IsEmpty() {
			continue
		}
		in.Workloads = append(in.Workloads, workload.Workload{Name: LeasePrefix + key, CPU: workload.CPUNeed{
			Exclusive: true, CPUs: l.Assignment.CPUs.Size(), Policy: l.Assignment.Policy,
			RequestMilli: l.Assignment.RequestMilli, Decided: l.Assignment.CPUs}})
	}
	return in
}

// inputKey is the part of the decision's input that comes from the
// checkpoint: the previous assignments and the leased CPUs.
func inputKey(prev map[string]workload.Assignment, ws []workload.Workload) string {
	leases := map[string]workload.Assignment{}
	for _, w := range ws {
		if strings.HasPrefix(w.Name, LeasePrefix) {
			leases[w.Name] = workload.Assignment{CPUs: w.CPU.Decided, Policy: w.CPU.Policy, RequestMilli: w.CPU.RequestMilli}
		}
	}
	raw, _ := json.Marshal(struct {
		Prev, Leases map[string]workload.Assignment
	}{prev, leases})
	return string(raw)
}

// SameAssignments says whether two sets of assignments give every workload
// the same CPUs, policy and request.
func SameAssignments(a, b map[string]workload.Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || !x.CPUs.Equals(y.CPUs) || x.Policy != y.Policy || x.RequestMilli != y.RequestMilli {
			return false
		}
	}
	return true
}

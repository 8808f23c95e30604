// Package runner is `locus run`: it starts a command in a cgroup of its own
// with a topology-aware cpuset and optional memory limit and memory QoS, and
// records the CPUs it takes as a lease in the agent's checkpoint so the agent
// and other runs route around them. decide.go is the pure decision; session.go
// and child.go apply it to the host.
package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// ErrBadRequest marks requests that can never be served as given; callers
// report them as usage errors. Allocation failures match
// cpualloc.ErrInsufficient or cpualloc.ErrInvalidRequest instead.
var ErrBadRequest = errors.New("bad request")

// Request is what the command asks for.
type Request struct {
	// CPUs > 0 asks for that many CPUs of its own; 0 runs in the shared pool
	// (the BE pool for QoS BE).
	CPUs          int
	Policy        cpualloc.Policy
	NUMAStrategy  cpualloc.NUMAStrategy
	QoS           memqos.Class // LS or BE
	MemoryRequest int64        // bytes; 0 = none
	MemoryLimit   int64        // bytes; 0 = no limit
	MemoryQoS     bool         // memory QoS policy auto; false leaves the files as created
	// CPUQoS applies the class's CPU QoS (BE: cpu.idle 1, or the lowest
	// cpu.shares where the kernel has no cpu.idle); false leaves the files.
	CPUQoS bool
}

// Validate checks the request on its own, before anything is read or changed.
func (r Request) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
	}
	switch {
	case r.CPUs < 0:
		return bad("cpus %d is negative", r.CPUs)
	case r.QoS != memqos.ClassLS && r.QoS != memqos.ClassBE:
		return bad("qos %q: want LS or BE", r.QoS)
	case r.MemoryRequest < 0:
		return bad("memory request %d is negative", r.MemoryRequest)
	case r.MemoryLimit < 0:
		return bad("memory limit %d is negative", r.MemoryLimit)
	case r.MemoryLimit > 0 && r.MemoryRequest > r.MemoryLimit:
		return bad("memory request %d exceeds the memory limit %d", r.MemoryRequest, r.MemoryLimit)
	}
	return nil
}

// Host is the machine and the agent's configuration that bound the decision.
type Host struct {
	Topology         *topology.Topology
	Reserved, BEPool cpuset.CPUSet
	UnrestrictedMems bool
	MemQoSOptions    memqos.Options
	CPUIdle          bool // cgroups have cpu.idle (cgroup.Hierarchy.KernelHas)
}

// Decision is what the run will hold.
type Decision struct {
	Cgroup string
	Pool   string // exclusive, static-burst, shared or be
	CPUs   cpuset.CPUSet
	Mems   string
	Ops    []cgroup.Op // every file to write in the new cgroup, in order
	// MemQoS is the memory QoS decision; nil when memory QoS was not asked for.
	MemQoS *memqos.Decision
	// CPUQoS is the CPU QoS decision; nil when CPU QoS was not asked for.
	CPUQoS *cpuqos.Decision
	// Lease records the CPUs; an empty CPU set means "runs in the shared
	// pool, holds nothing of its own". The caller fills in the owner.
	Lease    state.Lease
	Warnings []string
}

// Decide picks the CPUs and cgroup values for a run in cgroup cg, given the
// agent's checkpoint (its assignments and the other runs' leases are taken).
func Decide(h Host, cp state.Checkpoint, req Request, cg string) (Decision, error) {
	if err := req.Validate(); err != nil {
		return Decision{}, err
	}
	held := Held(cp)
	d := Decision{Cgroup: cg}
	if req.CPUs > 0 {
		res, err := cpualloc.Allocate(h.Topology, occupancy(held), h.Reserved, cpualloc.Request{
			CPUs: req.CPUs, Policy: req.Policy, NUMAStrategy: req.NUMAStrategy})
		if err != nil {
			return Decision{}, err
		}
		if err := keepsSharedPool(h, cp, held, res); err != nil {
			return Decision{}, err
		}
		d.CPUs, d.Pool = res.CPUs, "exclusive"
		if req.Policy == cpualloc.StaticBurst {
			d.Pool = string(cpualloc.StaticBurst)
		}
		// The lease records the rule applied, so its accounting (exclusive
		// or burst) is unambiguous to whoever reads the checkpoint.
		d.Lease.Assignment = workload.Assignment{CPUs: res.CPUs, Policy: res.Policy}
	} else {
		pools, problems := decide.ComputePools(h.Topology, h.Reserved, h.BEPool, held)
		d.CPUs, d.Pool = pools.Shared, "shared"
		if req.QoS == memqos.ClassBE {
			d.CPUs, d.Pool = pools.BE, "be"
		}
		if d.CPUs.IsEmpty() {
			return Decision{}, fmt.Errorf("%w: the shared pool is empty: every CPU is reserved or held exclusively",
				cpualloc.ErrInsufficient)
		}
		for _, p := range problems {
			d.Warnings = append(d.Warnings, p.String())
		}
		d.Lease.Assignment = workload.Assignment{CPUs: cpuset.New()}
	}
	d.Lease.Cgroup = cg
	d.Mems = decide.Mems(h.Topology, d.CPUs, h.UnrestrictedMems)
	// mems first, as the agent does, so memory is allowed where the CPUs are.
	d.Ops = []cgroup.Op{
		{Cgroup: cg, Knob: cgroup.CPUSetMems, Value: d.Mems},
		{Cgroup: cg, Knob: cgroup.CPUSetCPUs, Value: d.CPUs.String()},
	}
	if req.MemoryLimit > 0 {
		d.Ops = append(d.Ops, cgroup.Op{Cgroup: cg, Knob: cgroup.MemoryLimit, Value: fmt.Sprint(req.MemoryLimit)})
	}
	if req.MemoryQoS {
		dec, err := memqos.Decide(memqos.Config{}, memqos.NamespaceConfig{}, memQoSWorkload(req), h.MemQoSOptions)
		if err != nil {
			return Decision{}, fmt.Errorf("%w: memory QoS: %v", ErrBadRequest, err)
		}
		d.MemQoS = &dec
		d.Ops = append(d.Ops, memQoSOps(cg, dec)...)
	}
	if req.CPUQoS {
		dec := cpuqos.Decide(runCPUQoS, cpuqos.Workload{Class: string(req.QoS)}, cpuqos.Kernel{CPUIdle: h.CPUIdle})
		d.CPUQoS = &dec
		if dec.Idle {
			d.Ops = append(d.Ops, cgroup.Op{Cgroup: cg, Knob: cgroup.CPUIdle, Value: "1"})
		}
		if dec.Shares > 0 {
			d.Ops = append(d.Ops, cgroup.Op{Cgroup: cg, Knob: cgroup.CPUShares, Value: fmt.Sprint(dec.Shares)})
		}
	}
	return d, nil
}

// runCPUQoS is CPU QoS on for both classes with the protocol's defaults
// (groupIdentity LS 2, BE -1): what --qos asks of a run. The cgroup is new,
// so there is nothing to restore.
var runCPUQoS = cpuqos.Config{LS: &cpuqos.ClassConfig{Enable: new(true)}, BE: &cpuqos.ClassConfig{Enable: new(true)}}

// runContainer names the command in memory QoS decisions.
const runContainer = "command"

func memQoSWorkload(req Request) memqos.Workload {
	return memqos.Workload{
		Class: req.QoS, ClassFrom: "label " + workload.LabelQoSClass,
		Pod: memqos.PodSetting{Policy: memqos.PolicyAuto}, PodKey: workload.AnnotationMemoryQoS,
		Containers: []memqos.Container{{Name: runContainer,
			RequestBytes: req.MemoryRequest, LimitBytes: req.MemoryLimit}},
	}
}

// memQoSOps keeps the writes of the decision. The cgroup is new, so files the
// decision restores still hold their creation values: nothing to do there.
func memQoSOps(cg string, dec memqos.Decision) []cgroup.Op {
	var ops []cgroup.Op
	for _, c := range dec.Containers {
		for _, s := range c.Settings {
			if s.Op == memqos.Write {
				ops = append(ops, cgroup.Op{Cgroup: cg, Knob: cgroup.Knob(s.Knob), Value: fmt.Sprint(s.Value)})
			}
		}
	}
	return ops
}

// keepsSharedPool refuses exclusive CPUs that would leave the shared pool
// empty while something runs there: the agent's shared and BE workloads, or
// runs in the shared pool, would have no CPU left (and an empty cpuset
// cannot be written). With nobody in the pool, every CPU may be taken.
func keepsSharedPool(h Host, cp state.Checkpoint, held map[string]workload.Assignment, res cpualloc.Result) error {
	if res.Policy == cpualloc.StaticBurst {
		return nil // burst CPUs stay in the shared pool
	}
	var users []string
	for name := range cp.Workloads {
		if a, ok := cp.Assignments[name]; !ok || a.Policy == cpualloc.StaticBurst {
			users = append(users, name)
		}
	}
	for name, l := range cp.Leases {
		if l.Assignment.CPUs.IsEmpty() {
			users = append(users, "run "+name)
		}
	}
	if len(users) == 0 {
		return nil
	}
	slices.Sort(users)
	shared := h.Topology.CPUSet().Difference(h.Reserved).Difference(h.Topology.Isolated)
	for _, a := range held {
		if a.Policy != cpualloc.StaticBurst {
			shared = shared.Difference(a.CPUs)
		}
	}
	if shared.Difference(res.CPUs).IsEmpty() {
		return fmt.Errorf("%w: taking CPUs %q would leave the shared pool empty (it holds only CPUs %q), and %s run there",
			cpualloc.ErrInsufficient, res.CPUs.String(), shared.String(), strings.Join(users, ", "))
	}
	return nil
}

// Held is every CPU assignment in force: the agent's own and the other runs'
// leases (keyed "lease/<name>"), as decide.ComputePools takes them. Leases in
// the shared pool hold no CPUs and are left out.
func Held(cp state.Checkpoint) map[string]workload.Assignment {
	out := make(map[string]workload.Assignment, len(cp.Assignments)+len(cp.Leases))
	for name, a := range cp.Assignments {
		out[name] = a
	}
	for name, l := range cp.Leases {
		if !l.Assignment.CPUs.IsEmpty() {
			out["lease/"+name] = l.Assignment
		}
	}
	return out
}

// occupancy is the allocator's view of the held assignments.
func occupancy(held map[string]workload.Assignment) cpualloc.State {
	st := cpualloc.State{BurstMilli: map[int]int64{}}
	for _, a := range held {
		st = st.With(cpualloc.Result{CPUs: a.CPUs},
			cpualloc.Request{CPUs: a.CPUs.Size(), Policy: a.Policy, RequestMilli: a.RequestMilli})
	}
	return st
}

// Describe renders the decision as "name value" lines, for --dry-run.
func (d Decision) Describe() string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-28s %s\n", k, v) }
	line("cgroup", d.Cgroup)
	line("pool", d.Pool)
	if d.MemQoS != nil {
		state := "off"
		if d.MemQoS.Enabled {
			state = "on"
		}
		line("memory QoS", state+": "+d.MemQoS.Reason)
	}
	if d.CPUQoS != nil {
		line("CPU QoS", d.CPUQoS.Reason)
	}
	for _, op := range d.Ops {
		line(string(op.Knob), op.Value)
	}
	for _, w := range d.Warnings {
		line("warning", w)
	}
	return b.String()
}

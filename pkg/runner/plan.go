// Package runner is `locus run`: it starts a command in a cgroup of its own
// with a topology-aware cpuset and optional memory limit and memory QoS, and
// records the CPUs it takes as a lease in the agent's checkpoint so the agent
// and other runs route around them. plan.go is the pure plan, decided by
// decide.Decide; session.go and child.go apply it to the host.
package runner

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/hostconfig"
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
	// HugePages2Mi and HugePages1Gi are huge pages of that size, in bytes (a
	// whole number of pages), held on the NUMA nodes of the run's CPUs:
	// only a run with CPUs of its own has nodes to hold them on.
	HugePages2Mi, HugePages1Gi int64
	MemoryQoS                  bool // memory QoS policy auto; false leaves the files as created
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
	case r.MemoryRequest > workload.MaxMemoryBytes || r.MemoryLimit > workload.MaxMemoryBytes:
		return bad("memory request %d or limit %d is more than %d bytes (1Pi)", r.MemoryRequest, r.MemoryLimit, workload.MaxMemoryBytes)
	case r.MemoryLimit > 0 && r.MemoryRequest > r.MemoryLimit:
		return bad("memory request %d exceeds the memory limit %d", r.MemoryRequest, r.MemoryLimit)
	}
	for _, h := range []struct {
		name      string
		v, pageKB int64
	}{{"hugepages-2Mi", r.HugePages2Mi, topology.HugePages2MiKiB}, {"hugepages-1Gi", r.HugePages1Gi, topology.HugePages1GiKiB}} {
		switch {
		case h.v < 0:
			return bad("%s %d is negative", h.name, h.v)
		case h.v > workload.MaxMemoryBytes:
			return bad("%s %d is more than %d bytes (1Pi)", h.name, h.v, workload.MaxMemoryBytes)
		case h.v%(h.pageKB*1024) != 0:
			return bad("%s %d is not a whole number of %d KiB pages", h.name, h.v, h.pageKB)
		case h.v > 0 && r.CPUs == 0:
			return bad("%s %d needs CPUs of its own (--cpus): huge pages are held on the NUMA nodes of its CPUs", h.name, h.v)
		}
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

// Plan is what the run will hold.
type Plan struct {
	Cgroup string
	Pool   string // exclusive, static-burst, shared or be
	CPUs   cpuset.CPUSet
	Mems   string
	Ops    []cgroupfile.Op // every file to write in the new cgroup, in order
	// MemQoS is the memory QoS decision; nil when memory QoS was not asked for.
	MemQoS *memqos.Values
	// CPUQoS says what CPU QoS does for the run; "" when it was not asked for.
	CPUQoS string
	// Lease records the CPUs; an empty CPU set means "runs in the shared
	// pool, holds nothing of its own". The caller fills in the owner.
	Lease    state.Lease
	Warnings []string
}

// PlanRun decides a run in cgroup cg, named by cg's last element, with the
// agent's one decision (decide.Decide): the run is a workload, built by
// pkg/workload from the request, decided beside the agent's assignments in
// force and the other runs' leases (the checkpoint's), which it routes
// around. What the decision finds it cannot serve is an error.
func PlanRun(h Host, cp state.Checkpoint, req Request, cg string) (Plan, error) {
	if err := req.Validate(); err != nil {
		return Plan{}, err
	}
	if req.CPUs > 0 {
		if err := (cpualloc.Request{CPUs: req.CPUs, Policy: req.Policy, NUMAStrategy: req.NUMAStrategy}).Validate(); err != nil {
			return Plan{}, err
		}
	}
	name := path.Base(cg)
	rd := decide.Decide(observation(h, cp, req, name, cg), decide.Memory{})
	if err := runProblem(rd.Desired.Problems, name); err != nil {
		return Plan{}, err
	}
	st := stateOf(rd.Desired, name)
	d := Plan{Cgroup: cg, Pool: st.Pool, Mems: st.Mems}
	if a, ok := rd.Desired.Assignments[name]; ok {
		if err := keepsSharedPool(h, cp, rd.Desired, a); err != nil {
			return Plan{}, err
		}
		// The lease records the rule applied, so its accounting (exclusive
		// or burst) is unambiguous to whoever reads the checkpoint.
		d.CPUs = a.CPUs
		d.Lease.Assignment = workload.Assignment{CPUs: a.CPUs, Policy: cpualloc.Rule(h.Topology, a.Policy, a.CPUs),
			MemNodes: a.MemNodes, Memory: a.Memory, MemHeld: a.MemHeld}
	} else {
		d.CPUs = rd.Desired.Pools.Shared
		if st.Pool == "be" {
			d.CPUs = rd.Desired.Pools.BE
		}
		d.Lease.Assignment = workload.Assignment{CPUs: cpuset.New()}
	}
	d.Lease.Cgroup = cg
	for _, p := range rd.Desired.Problems {
		if p.Workload == "" {
			d.Warnings = append(d.Warnings, p.String())
		}
	}
	// The cgroup is new: what the decision restores still holds the value
	// it was created with, so only its writes are the run's.
	d.Ops, _ = rd.Writes()
	if req.MemoryQoS {
		dec := st.MemQoS
		if dec.Enabled { // by the run's flag: policy auto
			dec.Reason = fmt.Sprintf("--memory-qos auto: recommended %s profile", dec.Class)
		}
		d.MemQoS = &dec
	}
	if req.CPUQoS {
		d.CPUQoS = st.CPUQoSWhy
	}
	return d, nil
}

// observation is the run's decision's input: the run, the agent's
// assignments and the other runs' leases, and the agent's reserved CPUs,
// BE pool and mems. CPU QoS asked for is both classes' on; memory QoS
// asked for is the run's own policy auto (runWorkload).
func observation(h Host, cp state.Checkpoint, req Request, name, cg string) decide.Observation {
	cfg := &workload.Config{Host: &hostconfig.HostConfig{UnrestrictedMems: h.UnrestrictedMems}, Reserved: h.Reserved, BEPool: h.BEPool}
	if req.CPUQoS {
		cfg.CPUQoS = runCPUQoS
	}
	return decide.Observation{Topology: h.Topology, Config: cfg, Workloads: []workload.Workload{runWorkload(req, name, cg)},
		Leases: LeasesOf(cp.Leases), Held: cp.Assignments, Prepared: map[string]bool{cg: true},
		V1SoftLimitForLow: h.MemQoSOptions.V1SoftLimitForLow, ThrottleNotBelowRequest: h.MemQoSOptions.ThrottleNotBelowRequest,
		CPUIdle: h.CPUIdle}
}

// runWorkload is the run as a workload, read by pkg/workload as a
// HostConfig workload of its class, memory request and limit, in cg, with
// the CPUs it asks for.
func runWorkload(req Request, name, cg string) workload.Workload {
	var res hostconfig.Resources
	if req.MemoryRequest > 0 {
		res.Requests.Memory = resource.NewQuantity(req.MemoryRequest, resource.BinarySI)
	}
	if req.MemoryLimit > 0 {
		res.Limits.Memory = resource.NewQuantity(req.MemoryLimit, resource.BinarySI)
	}
	if req.HugePages2Mi > 0 {
		res.Requests.HugePages2Mi = resource.NewQuantity(req.HugePages2Mi, resource.BinarySI)
	}
	if req.HugePages1Gi > 0 {
		res.Requests.HugePages1Gi = resource.NewQuantity(req.HugePages1Gi, resource.BinarySI)
	}
	hw := hostconfig.Workload{Name: name, Cgroup: cg, QOSClass: string(req.QoS), Resources: res}
	w := workload.FromHostConfig(hw, cg).Plan
	if req.CPUs > 0 {
		// Its memory is placed with its CPUs; Validate bounded the
		// amounts, so the reader finds nothing wrong with them.
		m, _ := workload.StandaloneMemory(hw)
		w.CPU = workload.CPUNeed{Exclusive: true, CPUs: req.CPUs, Policy: req.Policy, NUMAStrategy: req.NUMAStrategy, Memory: m}
	}
	if req.MemoryQoS {
		// policy auto, as a pod's annotation says it: the recommended
		// profile, whatever the class's settings.
		w.MemQoS.Pod = memqos.PodSetting{Policy: memqos.PolicyAuto}
	}
	return w
}

// runProblem is the decision's problem with the run as the error of the
// run: CPUs it cannot have, an empty pool, memory QoS it cannot compute.
func runProblem(ps []workload.Problem, name string) error {
	for _, p := range ps {
		if p.Workload != name {
			continue
		}
		switch p.Reason {
		case "CPUAllocationFailed":
			return fmt.Errorf("%w: %s", cpualloc.ErrInsufficient, p.Message)
		case "NoCPUs":
			return fmt.Errorf("%w: the shared pool is empty: every CPU is reserved or held exclusively", cpualloc.ErrInsufficient)
		case "InvalidMemoryQOS":
			return fmt.Errorf("%w: memory QoS: %s", ErrBadRequest, p.Message)
		default:
			return fmt.Errorf("%s: %s", p.Reason, p.Message)
		}
	}
	return nil
}

// stateOf is the decision's state of the workload named.
func stateOf(d decide.Desired, name string) decide.WorkloadState {
	for _, st := range d.Workloads {
		if st.Name == name {
			return st
		}
	}
	return decide.WorkloadState{}
}

// runCPUQoS is CPU QoS on for both classes with the protocol's defaults
// (groupIdentity LS 2, BE -1): what --qos asks of a run. The cgroup is new,
// so there is nothing to restore.
var runCPUQoS = cpuqos.Config{LS: &cpuqos.ClassConfig{Enable: new(true)}, BE: &cpuqos.ClassConfig{Enable: new(true)}}

// keepsSharedPool refuses exclusive CPUs that would leave the shared pool
// empty while something runs there: the agent's shared and BE workloads, or
// runs in the shared pool, would have no CPU left (and an empty cpuset
// cannot be written). With nobody in the pool, every CPU may be taken.
func keepsSharedPool(h Host, cp state.Checkpoint, d decide.Desired, run workload.Assignment) error {
	if run.Policy == cpualloc.StaticBurst || !sharedPoolEmptied(d.Problems) {
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
	// The pool before the run took its CPUs: what neither the reservation
	// nor another's exclusive CPUs hold.
	was := h.Topology.CPUSet().Difference(d.Pools.Reserved).Difference(h.Topology.Isolated).
		Difference(d.Pools.Exclusive.Difference(run.CPUs))
	return fmt.Errorf("%w: taking CPUs %q would leave the shared pool empty (it holds only CPUs %q), and %s run there",
		cpualloc.ErrInsufficient, run.CPUs.String(), was.String(), strings.Join(users, ", "))
}

// sharedPoolEmptied says whether the decision left the shared pool with no
// CPU of its own (decide's SharedPoolEmpty).
func sharedPoolEmptied(ps []workload.Problem) bool {
	return slices.ContainsFunc(ps, func(p workload.Problem) bool { return p.Workload == "" && p.Reason == "SharedPoolEmpty" })
}

// Describe renders the decision as "name value" lines, for --dry-run.
func (d Plan) Describe() string {
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
	if d.CPUQoS != "" {
		line("CPU QoS", d.CPUQoS)
	}
	for _, op := range d.Ops {
		line(string(op.Knob), op.Value)
	}
	for _, w := range d.Warnings {
		line("warning", w)
	}
	return b.String()
}

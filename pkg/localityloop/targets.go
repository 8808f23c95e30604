// Package localityloop is the agent's memory locality worker: which
// workloads get their remote memory moved to the NUMA nodes of their CPUs,
// and when, and the goroutine that runs those migrations one at a time,
// records them across restarts, reports them as Events and measures them.
// The planning and the page moving are pkg/locality's.
package localityloop

import (
	"slices"
	"time"

	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Everything in this file is pure; the worker that runs migrations is in
// runner.go.

// Target is a workload whose memory locality is on: bound to CPUs of
// its own, with policy bestEffort from its annotation or its class.
type Target struct {
	Name       string
	Containers []workload.Container
	CPUs       string // the cpuset the run is for
	Local      []int  // the NUMA nodes of CPUs
	Nodes      []int  // the machine's memory nodes
	Settings   sloconfig.Locality
	// Skip is set when there is nothing to move whatever the memory holds:
	// one memory node, or CPUs on every node (locality.ReasonNoTargetNUMA).
	Skip string
}

// boundPools are the pools whose workloads have CPUs chosen for them, and so
// local NUMA nodes: exclusive CPUs, or static-burst ones (shared only with
// other static-burst workloads, placed by the same allocator).
var boundPools = []string{"exclusive", "static-burst"}

// Targets picks the workloads memory locality is on for. A bad
// annotation is a problem naming the field, and turns it off for that
// workload rather than falling back to the class: the annotation says the
// workload wants its own setting. Workloads without CPUs of their own are
// targets that are skipped: their memory has no local node to go to.
func Targets(ws []workload.Workload, states []decide.WorkloadState, classes map[string]sloconfig.Locality,
	memNodes []int) ([]Target, []workload.Problem) {
	stateOf := lazyStates(states)
	var out []Target
	var probs []workload.Problem
	for _, w := range ws {
		if w.Terminating { // its memory goes with it
			continue
		}
		if w.MemoryLocalityInvalid != "" {
			probs = append(probs, workload.Problem{Workload: w.Name, Reason: "InvalidMemoryLocality",
				Message: w.MemoryLocalityInvalid + `; using policy "none" instead (memory locality off for this workload, whatever its class says) until the annotation is fixed`})
			continue
		}
		class, guaranteed := w.QoS.Locality()
		fromClass, _ := sloconfig.LocalityForClass(classes, class, guaranteed)
		settings := sloconfig.ResolveLocality(w.MemoryLocality, fromClass)
		if settings.Policy != sloconfig.LocalityBestEffort {
			continue
		}
		st, ok := stateOf(w.Name)
		if !ok {
			continue
		}
		t := Target{Name: w.Name, Containers: w.Containers, CPUs: st.CPUs, Local: st.NUMANodes,
			Nodes: memNodes, Settings: settings}
		switch {
		case !slices.Contains(boundPools, st.Pool):
			// No CPUs of its own: it may run wherever the shared pool
			// reaches, so no node is its local one. The seed's answer is
			// MemoryLocalitySkipped "no target numa", not silence. The
			// pool's cpuset is left out of the record: it changes with
			// other workloads, which must not start a new series of runs
			// (and Events) for this one.
			t.CPUs, t.Local, t.Skip = "", nil, locality.ReasonNoTargetNUMA
		case !slices.ContainsFunc(memNodes, func(n int) bool { return !slices.Contains(st.NUMANodes, n) }):
			t.Skip = locality.ReasonNoTargetNUMA
		}
		out = append(out, t)
	}
	return out, probs
}

// MemoryNodes lists the nodes that have memory. A topology that reports no
// node sizes (some fixture trees) counts every node.
func MemoryNodes(t *topology.Topology) []int {
	var with, all []int
	for _, n := range t.Nodes {
		all = append(all, n.ID)
		if n.MemoryTotal > 0 {
			with = append(with, n.ID)
		}
	}
	if len(with) == 0 {
		return all
	}
	return with
}

// Record is what the last run for a workload was and said. It is kept
// across agent restarts (File).
type Record struct {
	CPUs     string             `json:"cpus"`
	Settings sloconfig.Locality `json:"settings"`
	Ran      time.Time          `json:"ran"` // when the last run started
	// Reported is what the last Event said, for the interval's rule.
	Reported locality.Report       `json:"reported"`
	Last     status.LocalityStatus `json:"last"`
}

// sameSeries says whether a target continues the record's series of runs:
// same cpuset, same settings. Anything else starts afresh, so a new cpuset
// (its memory is remote again) or a changed annotation runs now.
func (r *Record) sameSeries(t Target) bool {
	return r != nil && r.CPUs == t.CPUs && r.Settings == t.Settings
}

// due says whether a target should run now: once per cpuset and
// setting with no interval, else again once the interval has passed.
func due(r *Record, t Target, now time.Time) bool {
	if !r.sameSeries(t) {
		return t.Settings.Due(false, time.Time{}, now)
	}
	return t.Settings.Due(true, r.Ran, now)
}

// containerRun is one container's migration: a result, or why it could
// not run.
type containerRun struct {
	Name   string
	Result locality.Result
	Err    error
}

// podOutcome turns a target's runs into the Event's data. A target decided
// skipped reports every container skipped.
func podOutcome(t Target, runs []containerRun) locality.PodOutcome {
	var p locality.PodOutcome
	if t.Skip != "" {
		for _, c := range t.Containers {
			p.Containers = append(p.Containers, locality.ContainerOutcome{Name: c.Name,
				Status: locality.ContainerSkipped, Reason: t.Skip})
		}
		return p
	}
	for _, r := range runs {
		if r.Err != nil {
			p.Containers = append(p.Containers, locality.FailedOutcome(r.Name, r.Err))
		} else {
			p.Containers = append(p.Containers, r.Result.Outcome(r.Name))
		}
	}
	return p
}

// statusOf summarises a run for status.
func statusOf(p locality.PodOutcome, runs []containerRun, end time.Time) status.LocalityStatus {
	reason, _ := p.Event()
	s := status.LocalityStatus{Time: end.UTC(), Reason: reason}
	for _, r := range runs {
		if r.Err == nil {
			s.PagesMigrated += r.Result.Moved
		}
	}
	if completed, failed, _ := p.Counts(); p.Err == nil && (completed > 0 || failed == 0) {
		ratio, _ := p.LocalRatio()
		s.LocalRatio = &ratio
	}
	return s
}

// WithBalancer adds to targets the memory locality runs the NUMA balancer
// needs: one per group it placed but has not settled yet
// (balancerloop.Runner.AfterWrite), best effort towards the group's nodes,
// skipped when those are all the memory nodes. A workload the balancer
// placed has a node of its own after all: the balancer's target replaces
// the skipped one.
func WithBalancer(targets []Target, groups []balancerloop.Unsettled, nodes []int) []Target {
	var bal []Target
	for _, g := range groups {
		t := Target{Name: g.Name, Containers: g.Containers, CPUs: g.CPUs, Local: g.Nodes, Nodes: nodes,
			Settings: sloconfig.Locality{Policy: sloconfig.LocalityBestEffort}}
		if !slices.ContainsFunc(nodes, func(n int) bool { return !slices.Contains(g.Nodes, n) }) {
			t.Skip = locality.ReasonNoTargetNUMA
		}
		bal = append(bal, t)
	}
	targets = slices.DeleteFunc(targets, func(t Target) bool {
		return t.Skip != "" && slices.ContainsFunc(bal, func(b Target) bool { return b.Name == t.Name })
	})
	return append(targets, bal...)
}

// WithMoved adds to targets a run for each workload moved to other CPUs
// (decide.Memory.Moved): its memory follows it to its new nodes, best
// effort, whatever its own memory locality says. A moved workload that is
// a target already keeps its own settings: its new cpuset starts a new
// series of runs, which runs now.
func WithMoved(targets []Target, ws []workload.Workload, states []decide.WorkloadState, moved []string, nodes []int) []Target {
	stateOf := lazyStates(states)
	for _, w := range ws {
		if !slices.Contains(moved, w.Name) || w.Terminating {
			continue
		}
		st, ok := stateOf(w.Name)
		if !ok || !slices.Contains(boundPools, st.Pool) ||
			slices.ContainsFunc(targets, func(t Target) bool { return t.Name == w.Name && t.Skip == "" }) {
			continue
		}
		t := Target{Name: w.Name, Containers: w.Containers, CPUs: st.CPUs, Local: st.NUMANodes, Nodes: nodes,
			Settings: sloconfig.Locality{Policy: sloconfig.LocalityBestEffort}}
		if !slices.ContainsFunc(nodes, func(n int) bool { return !slices.Contains(st.NUMANodes, n) }) {
			t.Skip = locality.ReasonNoTargetNUMA
		}
		targets = slices.DeleteFunc(targets, func(o Target) bool { return o.Name == w.Name })
		targets = append(targets, t)
	}
	return targets
}

// lazyStates finds a workload's state by name, in a map built at the first
// look and holding pointers: a map of every state's copy, built for each
// reconcile, was 2.6 % of the bytes the agent allocated under a 300-pod
// churn where no workload had locality on or moved.
func lazyStates(states []decide.WorkloadState) func(name string) (*decide.WorkloadState, bool) {
	var byName map[string]*decide.WorkloadState
	return func(name string) (*decide.WorkloadState, bool) {
		if byName == nil {
			byName = make(map[string]*decide.WorkloadState, len(states))
			for i := range states {
				byName[states[i].Name] = &states[i]
			}
		}
		st, ok := byName[name]
		return st, ok
	}
}

package source

import (
	"reflect"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Loader turns a Source's snapshots into the config the reconcile loop runs
// on and hands the source each decision. While a snapshot equals the last
// one it returns the very same *workload.Config, so the last decision is
// reused (decide.Memory.Last).
type Loader struct {
	Source Source
	last   *Snapshot
	cfg    *workload.Config
}

// NewLoader loads the snapshots of src, and registers in reg (when not nil)
// the metrics of what src offers (a Watcher's).
func NewLoader(src Source, reg prometheus.Registerer) *Loader {
	registerMetrics(reg, src)
	return &Loader{Source: src}
}

// Load asks the source for a snapshot and returns the config in force with
// it, and the snapshot. The snapshot's SLO configuration is decoded
// already: the config is what is in force on a node with its labels. The
// workloads returned are the ones kept to compare the next snapshot with:
// the caller copies each out and changes none in place; it may append to a
// copy's Problems.
func (l *Loader) Load(env Env) (*workload.Config, Snapshot) {
	snap := l.Source.Snapshot(env)
	if l.last == nil || !reflect.DeepEqual(*l.last, snap) {
		last := snap
		l.last = &last
		l.cfg = workload.NodeConfig(snap.SLO.ForNode(snap.NodeLabels), snap.Reserved, snap.BEPool)
		l.cfg.MemQoSHeld = snap.MemoryQoSHeld
		l.cfg.MovesEnabled, l.cfg.Rebalance = snap.Moves, snap.Moves && snap.Rebalance
	}
	// The workloads are the snapshot kept, not a copy (one of every
	// workload at every reconcile, 3 % of the agent's bytes under a 300-pod
	// churn): the caller copies each one out. Their problems are clipped, so
	// that its appends to them never write into the snapshot kept.
	snap.Workloads = l.last.Workloads
	for i := range snap.Workloads {
		snap.Workloads[i].Problems = slices.Clip(snap.Workloads[i].Problems)
	}
	return l.cfg, snap
}

// Reconciled hands a reconcile's decision, on topology t, to the source.
func (l *Loader) Reconciled(t *topology.Topology, d decide.Desired) {
	l.Source.Reconciled(Outcome{Topology: t, Reserved: d.Pools.Reserved, Kubelet: d.Pools.Kubelet, Assignments: d.Assignments, Workloads: d.Workloads, Unlisted: d.Unlisted})
}

// MarkContainers makes a workload's container cgroups ready with its own,
// those its status does not list yet too: a pod's are below the pod's; a HostConfig workload's are its cgroup.
func MarkContainers(w workload.Workload, ready map[string]bool) {
	for _, c := range w.Containers {
		if c.Cgroup != w.Cgroup {
			ready[c.Cgroup] = ready[w.Cgroup]
		}
	}
	for _, cg := range w.Unlisted {
		ready[cg] = ready[w.Cgroup]
	}
}

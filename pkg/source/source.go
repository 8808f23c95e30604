// Package source defines what supplies the agent's workloads in place of a
// HostConfig (the pods of a Kubernetes node, later a runtime hook): a Snapshot
// observed at every reconcile, and the Outcome handed back.
package source

import (
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Source supplies the workloads in place of a HostConfig: the pods
// of a Kubernetes node. The reconcile loop asks it for a Snapshot at every
// reconcile, reconciles at once when Changed fires, and hands it every
// decision.
type Source interface {
	// Name is shown where a HostConfig's file name would be.
	Name() string
	// Snapshot returns the workloads and node settings in force now. It is
	// called from the reconcile loop only.
	Snapshot(env Env) Snapshot
	// Changed fires when Snapshot may return something new.
	Changed() <-chan struct{}
	// Reconciled receives the decision of every reconcile (the source may
	// publish it); it must not block.
	Reconciled(d Outcome)
}

// EventSource is a Source that also takes the agent's Events (the
// Kubernetes source posts them to the API server).
type EventSource interface {
	Source
	Emit(eventlog.Event)
}

// Env is what a source may need from the machine.
type Env struct {
	Topology *topology.Topology
	// Exists says whether a cgroup (relative to the cgroup root) exists; on
	// v1, in the cpuset hierarchy.
	Exists func(rel string) bool
	// Cgroups is the agent's cgroup hierarchy, which resolves every cgroup
	// directory under its root; nil where the source has none (tests).
	Cgroups *cgroup.Hierarchy
	// Early is the agent's executor's path for the cpuset of a container
	// that appears between two reconciles (execute.Early); nil where the
	// source has none.
	Early EarlyWriter
}

// EarlyWriter writes, between two reconciles, the cpuset the last decision
// gave a pod's new containers into one that appears (execute.Early): it
// resolves the pods' directories, marks their cgroups so that their
// containers' originals are theirs, and writes a container's ops.
type EarlyWriter interface {
	Hierarchy() *cgroup.Hierarchy
	Mark(pods []string) error
	Apply(ops []cgroupfile.Op) error
}

// Snapshot is the source's view: workloads plus the node-wide settings a
// HostConfig would otherwise give.
type Snapshot struct {
	// Error is a configuration problem the source found and reported; the
	// last good configuration stays in force meanwhile.
	Error            string
	Workloads        []Workload
	Reserved, BEPool cpuset.CPUSet
	// SLO is the node's SLO configuration: the last good value of each
	// ConfigMap key, decoded when it arrived.
	SLO sloconfig.Doc
	// NodeLabels are the labels of the agent's own Node; they select the
	// nodeStrategies entries of SLO in force.
	NodeLabels map[string]string
	// MemoryQoSHeld, when set, says why no memory QoS configuration is
	// known (a malformed ConfigMap and no last good value saved): the agent
	// then leaves every memory QoS file as it is, neither writing nor
	// restoring, since "unknown" is not "off".
	MemoryQoSHeld string
	// Moves is the node's switch for moving workloads that opted in
	// (workload.Config.MovesEnabled), and Rebalance its switch for moving
	// them off a NUMA node busier than another (workload.Config.Rebalance):
	// the agent's own settings, never a pod's.
	Moves, Rebalance bool
}

// Workload is one workload of a source.
type Workload struct {
	Plan workload.Workload
	// Class is the QoS class shown by locus status.
	Class string
	// Problems found while reading it; the workload still runs.
	Problems []workload.Problem
}

// Outcome is what one reconcile decided.
type Outcome struct {
	Topology    *topology.Topology
	Reserved    cpuset.CPUSet
	Kubelet     cpuset.CPUSet                  // the CPUs the kubelet's static CPU manager holds alone
	Assignments map[string]workload.Assignment // by workload; `locus run` leases left out
	Workloads   []decide.WorkloadState
	// Unlisted is, by pod cgroup, the cpuset a new container of the pod
	// gets (decide.Desired.Unlisted).
	Unlisted map[string]decide.PodCPUSet
}

// ContainerCPUs is, by workload, each container's part of a container-scope
// workload's CPUs as the decision divided them; nil when none is divided.
func (d Outcome) ContainerCPUs() map[string]map[string]string {
	var out map[string]map[string]string
	for _, w := range d.Workloads {
		if len(w.ContainerCPUs) == 0 {
			continue
		}
		if out == nil {
			out = map[string]map[string]string{}
		}
		out[w.Name] = w.ContainerCPUs
	}
	return out
}

// Urgent is a Source some of whose changes must not wait for the pace of a
// burst (pkg/pace): a new configuration. Its other changes fire Changed.
type Urgent interface {
	Urgent() <-chan struct{}
}

// UrgentOf is s's channel of urgent changes: nil, never ready, for a source
// without.
func UrgentOf(s Source) <-chan struct{} {
	if u, ok := s.(Urgent); ok {
		return u.Urgent()
	}
	return nil
}

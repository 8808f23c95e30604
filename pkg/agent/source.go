package agent

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// FromPod marks a workload supplied by a WorkloadSource: its processes are
// put in their cgroups by someone else (the kubelet), so the agent only
// decides and writes, and never creates, starts or moves anything.
const FromPod Source = "pod"

// WorkloadSource supplies the workloads in place of a HostConfig: the pods
// of a Kubernetes node. The reconcile loop asks it for a Snapshot at every
// reconcile, reconciles at once when Changed fires, and hands it every
// decision.
type WorkloadSource interface {
	// Name is shown where a HostConfig's file name would be.
	Name() string
	// Snapshot returns the workloads and node settings in force now. It is
	// called from the reconcile loop only.
	Snapshot(env SourceEnv) Snapshot
	// Changed fires when Snapshot may return something new.
	Changed() <-chan struct{}
	// Decided receives the decision of every reconcile (the source may
	// publish it); it must not block.
	Decided(d Decision)
}

// SourceEnv is what a source may need from the machine.
type SourceEnv struct {
	Topology *topology.Topology
	// Exists says whether a cgroup (relative to the cgroup root) exists; on
	// v1, in the cpuset hierarchy.
	Exists func(rel string) bool
}

// Snapshot is the source's view: workloads plus the node-wide settings a
// HostConfig would otherwise give.
type Snapshot struct {
	// Error is a configuration problem the source found and reported; the
	// last good configuration stays in force meanwhile.
	Error            string
	Workloads        []SourceWorkload
	Reserved, BEPool cpuset.CPUSet
	// ResourceQoSConfig is the last good value of resource-qos-config (see
	// CheckResourceQoSConfig); it configures every class-wide feature.
	ResourceQoSConfig string
	Namespaces        memqos.NamespaceConfig
	// MemoryQoSHeld, when set, says why no memory QoS configuration is
	// known (a malformed ConfigMap and no last good value saved): the agent
	// then leaves every memory QoS file as it is, neither writing nor
	// restoring, since "unknown" is not "off".
	MemoryQoSHeld string
}

// CheckResourceQoSConfig parses a resource-qos-config value the way the
// agent derives its settings from it, so that a source keeps in force only
// a value the agent accepts. Errors name the field.
func CheckResourceQoSConfig(raw string) error {
	_, err := configFromQoS(raw)
	return err
}

// configFromQoS derives a config from resource-qos-config alone, as from a
// HostConfig holding only that.
func configFromQoS(raw string) (*config, error) {
	hc := &hostconfig.HostConfig{}
	if strings.TrimSpace(raw) != "" {
		hc.ResourceQOSConfig = json.RawMessage(raw)
	}
	cfg, err := deriveConfig(hc)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "resourceQOSConfig: "))
	}
	return cfg, nil
}

// SourceWorkload is one workload of a source.
type SourceWorkload struct {
	Plan workload.Workload
	// Class is the QoS class shown by locus status.
	Class string
	// Problems found while reading it; the workload still runs.
	Problems []workload.Problem
}

// Decision is what one reconcile decided.
type Decision struct {
	Topology    *topology.Topology
	Reserved    cpuset.CPUSet
	Assignments map[string]workload.Assignment // by workload; `locus run` leases left out
	Workloads   []decide.WorkloadState
}

// sourceLoader turns snapshots into the loop's config and workloads. While
// a snapshot equals the last one it returns the very same *config, so the
// last decision is reused (see planMemo).
type sourceLoader struct {
	src  WorkloadSource
	last *Snapshot
	cfg  *config
	rs   []resolved
}

func (l *sourceLoader) load(env SourceEnv) (*config, []resolved, Snapshot) {
	snap := l.src.Snapshot(env)
	if l.last == nil || !reflect.DeepEqual(*l.last, snap) {
		cfg, err := configFromQoS(snap.ResourceQoSConfig)
		if err != nil { // the source should have checked it: keep the last
			snap.Error = strings.TrimPrefix(snap.Error+"; ", "; ") + "resource-qos-config: " + err.Error()
			if cfg = l.cfg; cfg == nil {
				cfg, _ = configFromQoS("")
			}
		}
		l.last = &snap
		next := *cfg
		next.namespaces, next.reserved, next.bePool = snap.Namespaces, snap.Reserved, snap.BEPool
		next.memQoSHeld = snap.MemoryQoSHeld
		l.cfg = &next
		l.rs = make([]resolved, len(snap.Workloads))
		for i, w := range snap.Workloads {
			l.rs[i] = resolved{spec: hostconfig.Workload{Name: w.Plan.Name, Cgroup: w.Plan.Cgroup},
				source: FromPod, cgroup: w.Plan.Cgroup, class: w.Class, plan: w.Plan, problems: w.Problems}
		}
	}
	// The loop appends to each workload's problems: give it its own slices.
	rs := slices.Clone(l.rs)
	for i := range rs {
		rs[i].problems = slices.Clip(rs[i].problems)
	}
	return l.cfg, rs, snap
}

// loadWorkloads gives this reconcile's config and workloads, from the
// source or from the HostConfig.
func (a *Agent) loadWorkloads() (*config, []resolved) {
	if a.src == nil {
		cfg, err := a.cfg.load(len(a.topo.CPUs))
		if err != nil {
			a.events.Emit(Warning, "ConfigInvalid", "", "%v; keeping the last good config", err)
		}
		a.countConfigError(err != nil, a.cfg.lastErr != "")
		return cfg, resolveWorkloads(cfg.host)
	}
	cfg, rs, snap := a.src.load(SourceEnv{Topology: a.topo, Exists: a.cgroupExists})
	a.countConfigError(snap.Error != "" && snap.Error != a.cfg.lastErr, snap.Error != "")
	// What the rest of the agent reads of the config in force (status,
	// shutdown) comes from the loader, as for a HostConfig.
	a.cfg.good, a.cfg.lastErr = cfg, snap.Error
	return cfg, rs
}

// sourceDecided hands a reconcile's decision to the source.
func (a *Agent) sourceDecided(cfg *config, d decide.Desired) {
	if a.src == nil {
		return
	}
	a.src.src.Decided(Decision{Topology: a.topo, Reserved: cfg.reserved, Assignments: d.Assignments, Workloads: d.Workloads})
}

// markContainers makes a pod's container cgroups ready with the pod's: for
// a HostConfig workload they are the workload's cgroup.
func markContainers(r *resolved, ready map[string]bool) {
	for _, c := range r.plan.Containers {
		if c.Cgroup != r.cgroup {
			ready[c.Cgroup] = ready[r.cgroup]
		}
	}
}

// owners maps every cgroup the reconcile writes to its workload, and
// remembers the container cgroups' names for the events.
func (a *Agent) owners(rs []resolved) map[string]string {
	owner := map[string]string{}
	a.containerNames = map[string]string{}
	for _, r := range rs {
		owner[r.cgroup] = r.spec.Name
		for _, c := range r.plan.Containers {
			if c.Cgroup != r.cgroup {
				owner[c.Cgroup], a.containerNames[c.Cgroup] = r.spec.Name, c.Name
			}
		}
	}
	return owner
}

// containerPrefix is "name:" for a container's cgroup, so that an event on
// a pod says which container each file belongs to; "" for the workload's.
func (a *Agent) containerPrefix(cg string) string {
	if c := a.containerNames[cg]; c != "" {
		return c + ":"
	}
	return ""
}

// countConfigError keeps the config error metrics: fresh counts a newly
// found invalid config, invalid says whether the current one is.
func (a *Agent) countConfigError(fresh, invalid bool) {
	if fresh {
		a.metrics.configErrs.Inc()
	}
	v := 0.0
	if invalid {
		v = 1
	}
	a.metrics.configBad.Set(v)
}

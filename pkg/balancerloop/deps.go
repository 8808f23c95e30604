package balancerloop

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Originals forgets the original values kept for files of cgroups gone.
type Originals interface {
	Forget(keys ...string) error
}

// Events tells what the balancer did (the agent's event log).
type Events interface {
	Emit(typ, reason, workload, format string, args ...any)
}

// Deps is what the runner is given by the agent.
type Deps struct {
	H         *cgroup.Hierarchy // read: children, processes, the counters measured
	Originals Originals
	Events    Events
	Log       *slog.Logger
	Now       func() time.Time
	// Wake asks for a reconcile after the given time.
	Wake func(after time.Duration)
	// Metrics registers the balancer's series.
	Metrics prometheus.Registerer
	// Load reads a JSON record of the state directory into v; false if it
	// is missing or unreadable (what names it in the warning).
	Load                          func(file, what string, v any) bool
	StateDir, ProcRoot, SysfsRoot string
}

// Workload is what the runner needs of a workload of this reconcile.
type Workload struct {
	Name        string
	Cgroup      string // its cgroup: never balanced as a child of Options.Cgroups
	Containers  []workload.Container
	Terminating bool // a terminating pod is written no more
}

// Run is the memory locality worker's last run for a group.
type Run struct {
	CPUs   string    // the cpuset the run was for
	Ran    time.Time // when it started
	Reason string    // the Event of its outcome (locality.EventSkipped, ...)
}

// Input is what the balancer observes of one reconcile, before the
// decision: the workloads and the machine.
type Input struct {
	Workloads   []Workload
	Topology    *topology.Topology
	MemoryNodes []int // the nodes that have memory
	// LastRun tells the memory locality worker's last run for a group; nil
	// while there is no worker.
	LastRun func(name string) (Run, bool)
}

package agent

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/pace"
	"github.com/locus-project/locus/pkg/server"
	"github.com/locus-project/locus/pkg/source"
)

// Options configure an Agent; the zero value of each field is its default.
type Options struct {
	ConfigFile    string         // "" uses the built-in config
	StateDir      string         // default /var/lib/locus
	SysfsRoot     string         // default /sys
	ProcRoot      string         // default /proc
	CgroupRoot    string         // default /sys/fs/cgroup
	CgroupVersion cgroup.Version // Auto detects
	DryRun        bool           // print the writes, change nothing
	Once          bool           // one reconcile; commands are not started
	Resync        time.Duration  // default 10s
	Pace          *pace.Pacer    // a burst's reconciles; nil: pace.Default, a Ratio or Bound of 0: unpaced
	// StaleAfter is how long /healthz tolerates no reconcile completing,
	// or one running; default server.DefaultStaleAfter(Resync).
	StaleAfter time.Duration
	// ConfigSettle: a changed ConfigFile is acted on once it has stayed the
	// same this long (default hostsource.DefaultConfigSettle; negative:
	// at once).
	ConfigSettle time.Duration
	MetricsAddr  string        // "" serves nothing
	StatusAddr   string        // when set, /status and /ui here, not at MetricsAddr (server.Config)
	Profiling    bool          // serve /debug/pprof/ beside /metrics
	StopGrace    time.Duration // SIGTERM to SIGKILL; default 10s
	// DebugWriteDelay sleeps between the steps of a reconcile, so tests can
	// kill the agent inside them.
	DebugWriteDelay   time.Duration
	V1SoftLimitForLow bool
	// ThrottleNotBelowRequest is memqos.Options.ThrottleNotBelowRequest.
	ThrottleNotBelowRequest bool
	Exe                     string    // binary with the shim; default this executable
	Out                     io.Writer // --dry-run output; default stdout
	Logger                  *slog.Logger
	// Version and Commit name the build in locus_build_info ("": unknown).
	Version, Commit string
	// Source, when set, supplies the workloads instead of ConfigFile (the
	// Kubernetes node agent's pods).
	Source source.Source
	// EventSink, when set, also receives every event (to post it to
	// Kubernetes); it must not block.
	EventSink func(eventlog.Event)
	// LocalityBudget bounds a workload's wait while its memory moves
	// (locality.Options.Budget, default 20 ms); LocalityMargin is the free memory a
	// target node keeps (zero: locality.DefaultMargin).
	LocalityBudget time.Duration
	LocalityMargin locality.Margin
	// NUMABalancer settles the workloads without CPUs of their own on NUMA
	// nodes (pkg/balancerloop).
	NUMABalancer balancerloop.Options
	// Kubelet, when its Dir is set, is where the kubelet keeps its CPU and
	// memory manager checkpoints and its configuration (kubelet.Reader): read
	// at every reconcile that finds them changed, never written. The host
	// checks at start read its configuration there too.
	Kubelet kubelet.Paths
	// CoreSched sets core scheduling cookies; nil: the kernel's (coresched).
	CoreSched execute.CoreScheduler
	// NRI registers with the runtime so containers are created pinned
	// (with a Source only: it concerns pods).
	NRI NRIOptions
}

// DefaultStateDir holds the agent's checkpoint, status and events.
const DefaultStateDir = "/var/lib/locus"

func withDefaults(o Options) Options {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	if abs, err := filepath.Abs(o.StateDir); err == nil {
		o.StateDir = abs
	}
	if o.SysfsRoot == "" {
		o.SysfsRoot = "/sys"
	}
	if o.Resync <= 0 {
		o.Resync = 10 * time.Second
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = server.DefaultStaleAfter(o.Resync)
	}
	if o.ConfigSettle == 0 {
		o.ConfigSettle = hostsource.DefaultConfigSettle
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 10 * time.Second
	}
	if o.Exe == "" {
		o.Exe, _ = os.Executable()
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return o
}

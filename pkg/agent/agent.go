// Package agent is the standalone node agent: the shell around the pure
// decision in pkg/decide. Each reconcile reads the HostConfig, makes the
// workloads' processes live in their cgroups, decides CPUs and memory QoS,
// saves the decision, then writes cgroups through pkg/cgroup.
package agent

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/localityloop"
	"github.com/locus-project/locus/pkg/nri"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/publish"
	"github.com/locus-project/locus/pkg/server"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/supervisor"
	"github.com/locus-project/locus/pkg/topology"
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
	// StaleAfter is how long /healthz tolerates no reconcile completing,
	// or one running; default server.DefaultStaleAfter(Resync).
	StaleAfter time.Duration
	// ConfigSettle: a changed ConfigFile is acted on once it has stayed the
	// same this long (default hostsource.DefaultConfigSettle; negative:
	// at once).
	ConfigSettle time.Duration
	MetricsAddr  string        // "" serves nothing
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
	// Source, when set, supplies the workloads instead of ConfigFile (the
	// Kubernetes node agent's pods).
	Source source.Source
	// EventSink, when set, also receives every event (to post it to
	// Kubernetes); it must not block.
	EventSink func(eventlog.Event)
	// LocalityBudget bounds one page-moving call of a memory locality run
	// (default locality.DefaultBudget); LocalityMargin is the free memory a
	// target node keeps (zero: locality.DefaultMargin).
	LocalityBudget time.Duration
	LocalityMargin locality.Margin
	// NUMABalancer settles the workloads without CPUs of their own on NUMA
	// nodes (pkg/balancerloop).
	NUMABalancer balancerloop.Options
	// Kubelet, when its Dir is set, is where the kubelet keeps its CPU and
	// memory manager checkpoints and its configuration (kubelet.go): read
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

// Agent is one standalone agent.
type Agent struct {
	opts      Options
	log       *slog.Logger
	h         *cgroup.Hierarchy
	w         *cgroup.Writer
	store     *state.Store
	originals cgroup.OriginalStore
	procs     procfs.FS
	events    *eventlog.Log
	metrics   *metrics
	health    *server.Health
	cfg       configInForce
	file      *hostsource.Loader   // the HostConfig; nil with a Source
	prep      *hostsource.Preparer // the processes of HostConfig workloads
	src       *source.Loader       // nil: the workloads come from the HostConfig
	topo      *topology.Topology
	topoStamp string        // the topology files topo was discovered with
	mem       decide.Memory // what the decision remembers between reconciles
	started   []state.Process
	sup       *supervisor.Supervisor
	lock      *os.File
	now       func() time.Time
	trigger   chan struct{}

	exec       *execute.Executor  // carries the decisions out
	hostChecks []status.HostCheck // the host checks run at start
	pub        *publish.Publisher
	kube       kubeletReader        // the kubelet's files, as last read
	loc        *localityloop.Runner // memory locality migrations; nil until the first reconcile
	locMetrics *localityloop.Metrics

	bal *balancerloop.Runner // the NUMA balancer; nil until the first reconcile

	cpuIdle bool // cgroups have cpu.idle
	// The NRI plugin and its handler (nil when off), and the calls it
	// makes on the loop.
	nri     *nri.Plugin
	nriLoop *nri.LoopHandler
	calls   chan func()
}

// New checks the machine and the config and opens the state directory. Under
// DryRun it creates nothing: the state is read if present.
func New(opts Options) (*Agent, error) {
	opts = withDefaults(opts)
	m := newMetrics()
	a := &Agent{opts: opts, log: opts.Logger, procs: procfs.New(opts.ProcRoot), metrics: m,
		pub: publish.NewPublisher(opts.StateDir, m.Metrics),
		now: time.Now, trigger: make(chan struct{}, 1),
		calls: make(chan func())}
	a.locMetrics = localityloop.NewMetrics(a.metrics.reg)
	a.health = server.NewHealth(a.now, opts.StaleAfter)
	var err error
	if a.h, err = cgroup.Open(opts.CgroupRoot, opts.CgroupVersion); err != nil {
		return nil, err
	}
	a.runHostChecks()
	if err := checkPrivilege(a.h, opts.DryRun); err != nil {
		return nil, err
	}
	a.cpuIdle = a.h.KernelHas(cgroup.CPUIdle)
	if err = a.refreshTopology(); err != nil {
		return nil, err
	}
	if opts.Source != nil {
		a.src = source.NewLoader(opts.Source)
	} else {
		a.file = hostsource.NewLoader(opts.ConfigFile, opts.ConfigSettle, time.Now, a.wake)
		if err := a.file.FirstLoad(len(a.topo.CPUs)); err != nil {
			return nil, err
		}
		a.cfg.good = a.file.Good()
	}
	if err := a.openState(); err != nil {
		a.Close()
		return nil, err
	}
	if a.w, err = cgroup.NewWriter(a.h, a.originals); err != nil {
		a.Close()
		return nil, err
	}
	if opts.DebugWriteDelay > 0 {
		a.w.BetweenBatches = a.debugDelay
	}
	a.sup = supervisor.New(a.procs, a.h, opts.Exe, opts.StateDir, opts.StopGrace, a.wake)
	a.prep = hostsource.NewPreparer(hostsource.Options{Procs: a.procs, Cgroups: a.h, Writer: a.w,
		Exists: a.cgroupExists, Sup: a.sup, Save: a.saveEntry, Events: a.events, Wake: a.wake,
		Pause: a.debugDelay, Now: time.Now, DryRun: opts.DryRun, Once: opts.Once, Out: opts.Out})
	a.exec = a.newExecutor()
	return a, nil
}

// newExecutor builds the executor on the agent's hierarchy, writer and
// stores; under DryRun it only prints.
func (a *Agent) newExecutor() *execute.Executor {
	return execute.New(execute.Config{Hierarchy: a.h, Writer: a.w, Originals: a.originals,
		OriginalsFile: OriginalsFile, Store: a.store, Procs: a.procs, Stopper: a.sup,
		Events: a.events, Log: a.log, Writes: a.metrics.writes, Unsupported: a.metrics.Unsupported,
		Core: a.opts.CoreSched, Pods: a.src != nil,
		DryRun: a.opts.DryRun, Out: a.opts.Out})
}

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

// openState takes the agent lock and opens the checkpoint, the originals
// and the event log. A dry run only reads what is there.
func (a *Agent) openState() error {
	dir := a.opts.StateDir
	if a.opts.DryRun {
		a.store = &state.Store{Dir: dir, ReadOnly: true}
		orig, err := cgroup.ReadFileStore(filepath.Join(dir, OriginalsFile))
		a.originals = orig
		a.events, _ = eventlog.Open("", a.log)
		return err
	}
	var err error
	if a.store, err = state.Open(dir); err != nil {
		return err
	}
	if a.lock, err = takeAgentLock(a.store.Path(LockFile)); err != nil {
		return err
	}
	if a.events, err = eventlog.Open(a.store.Path(eventlog.EventsFile), a.log); err != nil {
		return err
	}
	a.events.Sink = a.opts.EventSink // not under DryRun: a dry run tells nobody
	store, err := cgroup.OpenFileStore(a.store.Path(OriginalsFile))
	if err != nil {
		return err
	}
	a.originals = store
	return execute.CheckOriginals(store, a.store, OriginalsFile, a.events, a.log)
}

// OriginalsFile keeps the original cgroup values, under the state directory.
const OriginalsFile = "originals.json"

// Close releases the agent lock. It leaves workloads running.
func (a *Agent) Close() {
	a.loc.Stop()
	if a.lock != nil {
		a.lock.Close()
		a.lock = nil
	}
}

// saveEntry records a workload's ownership in the checkpoint (a dry run's
// store is read-only). A failure is logged: the next reconcile records it
// again.
func (a *Agent) saveEntry(name string, e state.Workload) {
	err := a.store.Update(func(c *state.Checkpoint) error {
		c.Workloads[name] = e
		return nil
	})
	if err != nil {
		a.log.Error("cannot save checkpoint", "workload", name, "err", err)
	}
}

// wake asks for a reconcile after a delay.
func (a *Agent) wake(after time.Duration) {
	poke := func() {
		select {
		case a.trigger <- struct{}{}:
		default:
		}
	}
	if after <= 0 {
		poke()
		return
	}
	time.AfterFunc(after, poke)
}

func (a *Agent) debugDelay() {
	if a.opts.DebugWriteDelay > 0 {
		time.Sleep(a.opts.DebugWriteDelay)
	}
}

func (a *Agent) configName() string {
	if a.src != nil {
		return a.src.Source.Name()
	}
	if a.opts.ConfigFile == "" {
		return "built-in"
	}
	return a.opts.ConfigFile
}

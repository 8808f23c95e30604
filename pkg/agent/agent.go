// Package agent is the standalone node agent: the shell around the pure
// decision in pkg/decide. Each reconcile reads the HostConfig, makes the
// workloads' processes live in their cgroups, decides CPUs and memory QoS,
// saves the decision, then writes cgroups through pkg/cgroup.
package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/burstwatch"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/localityloop"
	"github.com/locus-project/locus/pkg/nri"
	"github.com/locus-project/locus/pkg/pace"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/publish"
	"github.com/locus-project/locus/pkg/server"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/supervisor"
	"github.com/locus-project/locus/pkg/topology"
)

// Agent is one standalone agent.
type Agent struct {
	opts      Options
	log       *slog.Logger
	h         *cgroup.Hierarchy
	store     state.State
	originals cgroup.OriginalStore
	writes    cgroup.OriginalStore // the Writer's: originals, the cgroups created kept apart too
	procs     procfs.FS
	events    *eventlog.Log
	metrics   *publish.Metrics
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
	kube       kubelet.Reader       // the kubelet's files, as last read
	loc        *localityloop.Runner // memory locality migrations; nil until the first reconcile
	locMetrics *localityloop.Metrics

	bal      *balancerloop.Runner // the NUMA balancer; nil until the first reconcile
	balanced decide.Balanced      // its placements, as this reconcile observed them

	cpuIdle bool              // cgroups have cpu.idle
	burst   *burstwatch.Watch // reads what CPU Burst decides on
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
	if err := pace.Of(opts.Pace).Check(); err != nil {
		return nil, err // before anything is opened
	}
	m := publish.NewMetrics(opts.Version, opts.Commit)
	a := &Agent{opts: opts, log: opts.Logger, procs: procfs.New(opts.ProcRoot), metrics: m,
		pub: publish.NewPublisher(opts.StateDir, m),
		now: time.Now, trigger: make(chan struct{}, 1),
		calls: make(chan func())}
	a.locMetrics = localityloop.NewMetrics(a.metrics.Reg)
	a.health = server.NewHealth(a.now, opts.StaleAfter)
	var err error
	if a.h, err = cgroup.Open(opts.CgroupRoot, opts.CgroupVersion); err != nil {
		return nil, err
	}
	a.runHostChecks()
	if !opts.DryRun { // a dry run writes nothing and needs no privilege
		if err := a.h.CheckPrivilege(); err != nil { // could it write any cgroup?
			return nil, err
		}
	}
	a.cpuIdle, a.burst = a.h.KernelHas(cgroup.CPUIdle), burstwatch.New(a.h, opts.ProcRoot)
	if err = a.refreshTopology(); err != nil {
		return nil, err
	}
	if opts.Source != nil {
		a.src = source.NewLoader(opts.Source, m.Reg)
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
	a.sup = supervisor.New(a.procs, a.h, opts.Exe, opts.StateDir, opts.StopGrace, a.wake)
	if a.exec, err = a.newExecutor(); err != nil {
		a.Close()
		return nil, err
	}
	a.prep = hostsource.NewPreparer(hostsource.Options{Procs: a.procs, Cgroups: a.h, Writer: a.exec,
		Exists: a.cgroupExists, Sup: a.sup, Save: a.saveEntry, Events: a.events, Wake: a.wake,
		Pause: a.debugDelay, Now: time.Now, DryRun: opts.DryRun, Once: opts.Once, Out: opts.Out})
	return a, nil
}

// newExecutor builds the executor, the only holder of a cgroup writer, on
// the agent's hierarchy and stores; under DryRun it only prints. Files
// confirmed lately are read again within a resync (execute.Config.Recheck),
// not every reconcile.
func (a *Agent) newExecutor() (*execute.Executor, error) {
	var between func() // set, it writes one batch at a time
	if a.opts.DebugWriteDelay > 0 {
		between = a.debugDelay
	}
	return execute.New(execute.Config{Hierarchy: a.h, Originals: a.originals, Created: a.writes, BetweenBatches: between,
		OriginalsFile: OriginalsFile, Store: a.store, Procs: a.procs, Stopper: a.sup,
		Events: a.events, Log: a.log, Writes: a.metrics.Writes, Unsupported: a.metrics.Unsupported,
		Core: a.opts.CoreSched, Pods: a.src != nil,
		DryRun: a.opts.DryRun, Out: a.opts.Out, Recheck: a.opts.Resync, Now: a.now})
}

// openState takes the agent lock and opens the checkpoint, the originals
// and the event log. A dry run only reads what is there.
func (a *Agent) openState() error {
	dir := a.opts.StateDir
	if a.opts.DryRun {
		a.store = &state.Store{Dir: dir, ReadOnly: true}
		orig, err := cgroup.ReadFileStore(filepath.Join(dir, OriginalsFile))
		a.originals, a.writes = orig, orig
		a.events, _ = eventlog.Open("", a.log)
		return err
	}
	var err error
	if a.store, a.lock, err = state.OpenAgent(dir); err != nil {
		return err
	}
	if a.events, err = eventlog.Open(filepath.Join(dir, eventlog.EventsFile), a.log); err != nil {
		return err
	}
	a.events.Sink = a.opts.EventSink // not under DryRun: a dry run tells nobody
	store, err := cgroup.OpenFileStore(filepath.Join(dir, OriginalsFile))
	if err != nil {
		return err
	}
	if a.writes, err = cgroup.OpenCreated(filepath.Join(dir, CreatedFile), store); err != nil {
		return err
	}
	a.originals = store
	return execute.CheckOriginals(store, a.store, filepath.Join(dir, OriginalsFile), a.events, a.log)
}

// OriginalsFile keeps the original cgroup values, and CreatedFile the
// cgroups Locus created (cgroup.Created), under the state directory.
const OriginalsFile, CreatedFile = "originals.json", "created.json"

// Close releases the agent lock. It leaves workloads running.
func (a *Agent) Close() {
	a.loc.Stop()
	a.exec.Close()
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

func (a *Agent) debugDelay() { time.Sleep(a.opts.DebugWriteDelay) } // none unless set

func (a *Agent) configName() string {
	if a.src != nil {
		return a.src.Source.Name()
	}
	if a.opts.ConfigFile == "" {
		return "built-in"
	}
	return a.opts.ConfigFile
}

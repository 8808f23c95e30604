package agent

import (
	"context"
	"errors"
	"time"

	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/idletrim"
	"github.com/locus-project/locus/pkg/pace"
	"github.com/locus-project/locus/pkg/source"
)

// Run reconciles until ctx ends: at start, on every change of the config file, every Resync,
// when a started process exits, and on a change of the source, paced in a burst (pkg/pace).
// With Once or DryRun it reconciles once and returns an error if a write failed.
// On the way out it stops the workloads marked stop-on-agent-exit.
func (a *Agent) Run(ctx context.Context) error {
	if a.opts.Once || a.opts.DryRun {
		return errors.Join(a.Reconcile().Errors...)
	}
	srv, err := a.serve(a.opts.MetricsAddr)
	if err != nil {
		return err
	}
	defer srv.Close()
	var changes <-chan struct{}
	var watchErrs <-chan error
	if a.opts.ConfigFile != "" {
		w, err := hostsource.WatchConfig(a.opts.ConfigFile) // the file only, not its directory's others
		if err != nil {
			return err
		}
		defer w.Close()
		changes, watchErrs = w.Changed(), w.Errors()
	}
	var sourceChanged, urgent <-chan struct{}
	if a.src != nil {
		sourceChanged, urgent = a.src.Source.Changed(), source.UrgentOf(a.src.Source)
	}
	stopNRI := a.startNRI(ctx)
	defer stopNRI()
	resync := time.NewTicker(a.opts.Resync)
	defer resync.Stop()
	// Editors and ConfigMap updates change the directory in several steps;
	// the reconcile runs once they pause for configSettle.
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	live := time.NewTicker(time.Second)
	defer live.Stop()
	a.log.Info("agent started", "config", a.configName(), "stateDir", a.opts.StateDir,
		"cgroup", a.h.Root(), "version", a.h.Version().String())
	if ctx.Err() != nil {
		// Stopped while starting (a SIGTERM right after exec): shut down
		// cleanly before changing anything.
		return a.shutdown()
	}
	trim := idletrim.Start(ctx, 2*time.Second, a.log) // the heap back to what is live between reconciles
	gate := pace.NewGate(pace.Of(a.opts.Pace), a.metrics.Reg, nil)
	defer gate.Stop()
	gate.Run(func() { a.logResult(a.Reconcile()) })
	trim.StartedUp() // busy, and the pages only start-up touched back now: a churning node may never be quiet
	for {
		select { // containers waiting to be created go before the next reconcile
		case f := <-a.calls:
			f()
			continue
		default:
		}
		select {
		case <-ctx.Done():
			return a.shutdown()
		case <-a.trigger:
		case f := <-a.calls: // the NRI plugin's
			f()
			continue
		case <-sourceChanged:
			if !gate.Changed() {
				continue
			}
		case <-gate.C():
		case <-urgent: // a new configuration
		case <-resync.C:
		case <-changes:
			settle.Reset(configSettle)
			continue
		case <-settle.C:
		case err := <-watchErrs:
			a.log.Warn("config watch", "err", err)
			continue
		case <-live.C:
			if !a.anyExited() {
				continue
			}
		}
		gate.Run(func() { a.logResult(a.Reconcile()) })
		trim.Busy()
	}
}

func (a *Agent) logResult(res Result) {
	for _, e := range res.Errors {
		a.log.Error("reconcile", "err", e)
	}
}

// configSettle is how long the config directory must stay quiet after an
// event before the config is read: long enough for an editor's or a
// ConfigMap's steps to land together, short next to a reconcile.
const configSettle = 20 * time.Millisecond

// anyExited reports whether a process the agent started (as the last
// reconcile recorded them) has died.
func (a *Agent) anyExited() bool {
	for i := range a.started {
		if !a.procAlive(&a.started[i]) {
			return true
		}
	}
	return false
}

// shutdown stops and removes the workloads marked stop-on-agent-exit (the
// built-in demo ones); every other workload keeps running and keeps its
// cgroup values, so restarting the agent changes nothing.
func (a *Agent) shutdown() error {
	a.loc.Stop() // before stopping workloads: a migration ends between two batches
	ck, err := a.store.Load()
	if err != nil {
		return err
	}
	stop, keep := hostsource.StopOnExit(a.cfg.good.HostConfig())
	var errs []error
	for _, name := range stop {
		if e, ok := ck.Workloads[name]; ok {
			if _, err := a.exec.Remove(name, e, keep); err != nil {
				errs = append(errs, err)
			}
		}
	}
	_ = a.store.DropAssignments(stop)
	if err := a.pub.Forget(stop); err != nil {
		errs = append(errs, err)
	}
	a.log.Info("agent stopped")
	return errors.Join(errs...)
}

// RunOn runs an agent on src until ctx ends (once, with o.Once or
// o.DryRun), its Events handed to src too, and closes it.
func RunOn(ctx context.Context, o Options, src source.EventSource) error {
	o.Source, o.EventSink = src, src.Emit
	a, err := New(o)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx)
}

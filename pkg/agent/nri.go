package agent

import (
	"context"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/nri"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// NRIOptions turn on the NRI plugin (Kubernetes mode only): containers are
// then created with their cpuset and memory QoS values, and the reconcile
// loop stays as the repair path.
type NRIOptions struct {
	Enabled    bool
	Socket     string // default nri.DefaultSocket
	FailClosed bool   // refuse to create an exclusive-CPU container without its CPUs
}

// call runs f on the loop; false if ctx ended first.
func (a *Agent) call(ctx context.Context, f func()) bool {
	done := make(chan struct{})
	select {
	case a.calls <- func() { f(); close(done) }:
	case <-ctx.Done():
		return false
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// decideContainers decides, with the reconcile's own Decide, the values of
// containers about to be created (or running, at a synchronization): the
// workloads are the source's, the decision is saved in the checkpoint like
// a reconcile's, and each container gets what Compute gives its cgroup.
func (a *Agent) decideContainers(reqs []nri.Request) []nri.Answer {
	defer a.h.Scope()()
	defer a.events.Hold()()
	cfg, rs := a.loadWorkloads()
	ws := make([]*workload.Workload, len(rs))
	for i := range rs {
		ws[i] = &rs[i].plan
	}
	m := nri.MatchWorkloads(reqs, ws)
	ck, err := a.store.Load()
	var rd decide.Ready
	if err == nil {
		// These workloads have containers the last decision's key does not
		// see: decided again, with its steps for the workloads not changed.
		last := a.mem.Last
		a.mem.Last = last.Steps()
		rd, err = a.decide(cfg, rs, plans(rs), map[string]bool{}, ck)
		a.mem.Last = last
	}
	if err != nil {
		return m.Failed(err)
	}
	a.emit(rd.Events)
	return m.Answers(rd.Desired.Ops, a.h.Version())
}

// dropGone leaves out the pods whose sandbox the runtime stopped.
func (a *Agent) dropGone(rs []resolved) []resolved {
	rs, dropped := nri.DropStopped(a.nriLoop, rs, func(r resolved) (string, string) { return r.plan.Name, r.cgroup })
	if dropped {
		// The last decision was made for the workloads of the same config,
		// which still lists these.
		a.mem.Last = nil
	}
	return rs
}

// startNRI runs the NRI plugin, when on, until the returned stop; its
// calls are carried out on the loop.
func (a *Agent) startNRI(ctx context.Context) (stop func()) {
	if !a.opts.NRI.Enabled || a.src == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx) // also ends the calls the handler makes in the background
	a.nriLoop = nri.NewLoopHandler(ctx, nri.Loop{Call: a.call, Answer: a.decideContainers, Events: a.events,
		Wake: func() { a.wake(0) }, Creates: a.metrics.NRICreates, Answers: a.metrics.NRIAnswers, Source: a.src.Source})
	a.nri = nri.New(a.nriLoop, nri.Options{Socket: a.opts.NRI.Socket, FailClosed: a.opts.NRI.FailClosed,
		Logger: a.log, OnChange: func() { a.wake(0) }})
	a.nri.RegisterMetrics(a.metrics.Reg)
	stopPlugin := a.nri.Start(ctx)
	return func() { cancel(); stopPlugin() }
}

// pinning is the status's word on the path: none outside Kubernetes mode.
func (a *Agent) pinning() *status.Pinning {
	if a.src == nil {
		return nil
	}
	return a.src.Pinning(nri.Pinning(a.nri))
}

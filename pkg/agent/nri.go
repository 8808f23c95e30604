package agent

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
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

// nriHandler is the agent as the NRI plugin sees it: every call is carried
// out by the reconcile loop's goroutine (a.calls), so that a decision at
// creation and a reconcile never run at once and both reach the one Decide.
type nriHandler struct{ a *Agent }

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

func (h nriHandler) Decide(ctx context.Context, reqs []nri.Request) []nri.Decision {
	var out []nri.Decision
	if h.a.call(ctx, func() { out = h.a.decideContainers(reqs) }) {
		return out
	}
	// The loop is busy (a long reconcile): the containers start as they are
	// and the next reconcile applies the decision (the loop may still make
	// and save it once it gets to the call).
	out = make([]nri.Decision, len(reqs))
	for i, r := range reqs {
		out[i] = nri.Decision{Err: nri.ErrNoDecision, Exclusive: workload.AsksForCPUs(r.Pod.Labels, r.Pod.Annotations)}
	}
	return out
}

func (h nriHandler) Unpinned(pod nri.Pod, ctr nri.Container, err error, blocked bool) {
	name := pod.Namespace + "/" + pod.Name
	reason, then := "CreatedUnpinned", "it starts as the runtime has it; the agent applies its values once it runs"
	if blocked {
		reason, then = "CreationRefused", "its creation is refused until they are (--nri-fail-closed); the kubelet retries"
	}
	h.a.metrics.NRICreates.WithLabelValues(reason).Inc()
	go h.a.call(h.a.runCtx, func() {
		h.a.events.Emit(eventlog.Warning, reason, name, "container %q got no CPUs or memory QoS values at creation (%v): %s", ctr.Name, err, then)
	})
}

// Gone frees a pod's CPUs as soon as its sandbox stops: the pod is left out
// of the decisions until the source no longer lists it. A container
// stopping frees nothing (the CPUs are the pod's) but is looked at now.
func (h nriHandler) Gone(pod nri.Pod, ctr nri.Container) {
	go h.a.call(h.a.runCtx, func() {
		if ctr.ID == "" {
			h.a.nriGone[pod.Namespace+"/"+pod.Name] = pod.UID
		}
		h.a.wake(0)
	})
}

// decideContainers decides, with the reconcile's own Decide, the values of
// containers about to be created (or running, at a synchronization): the
// workloads are the source's, the decision is saved in the checkpoint like
// a reconcile's, and each container gets what Compute gives its cgroup.
// A container not yet running has no cgroup: it is given a name under its
// pod's that is only a key into the decision, never written.
func (a *Agent) decideContainers(reqs []nri.Request) []nri.Decision {
	out := make([]nri.Decision, len(reqs))
	defer a.h.Scope()()
	defer a.events.Hold()()
	for _, q := range reqs {
		delete(a.nriGone, q.Pod.Namespace+"/"+q.Pod.Name) // a new sandbox of a stopped pod
	}
	cfg, rs := a.loadWorkloads()
	byName := map[string]int{}
	for i := range rs {
		byName[rs[i].plan.Name] = i
	}
	keys := make([]string, len(reqs))
	for i, q := range reqs {
		name := q.Pod.Namespace + "/" + q.Pod.Name
		j, ok := byName[name]
		if !ok {
			out[i] = nri.Decision{Exclusive: workload.AsksForCPUs(q.Pod.Labels, q.Pod.Annotations),
				Err: fmt.Errorf("pod %s is not known to the agent yet (its cgroup, or the pod from the API server)", name)}
			continue
		}
		r := &rs[j]
		out[i].Exclusive = r.plan.CPU.Exclusive
		for _, c := range r.plan.Containers {
			if c.Name == q.Container.Name {
				keys[i] = c.Cgroup
			}
		}
		if keys[i] == "" {
			keys[i] = fmt.Sprintf("%s/locus-nri-%d", r.cgroup, i)
			r.plan.Containers = append(slices.Clip(r.plan.Containers), workload.Container{Name: q.Container.Name, Cgroup: keys[i]})
		}
	}
	ck, err := a.store.Load()
	var rd decide.Ready
	if err == nil {
		// The last decision is reused only for the same workloads; these
		// have containers the reconcile's have not.
		last := a.mem.Last
		a.mem.Last = nil
		rd, err = a.decide(cfg, rs, map[string]bool{}, ck)
		a.mem.Last = last
	}
	if err != nil {
		for i := range out {
			if out[i].Err == nil {
				out[i].Err = err
			}
		}
		return out
	}
	a.emit(rd.Events)
	values := containerValues(rd.Desired.Ops, a.h.Version())
	for i := range reqs {
		if out[i].Err == nil {
			out[i].Values = values[keys[i]]
			a.metrics.NRICreates.WithLabelValues("Decided").Inc()
		}
	}
	return out
}

// containerValues are the values of each cgroup that the OCI spec carries:
// the cpuset, and on v2 memory.min, low and high, on v1 the soft limit.
// The others (the wmark files) are the reconcile loop's.
func containerValues(ops []cgroup.Op, v cgroup.Version) map[string]nri.Values {
	out := map[string]nri.Values{}
	for _, op := range ops {
		x := out[op.Cgroup]
		switch op.Knob {
		case cgroup.CPUSetCPUs:
			x.CPUs = op.Value
		case cgroup.CPUSetMems:
			x.Mems = op.Value
		case cgroup.MemoryMin, cgroup.MemoryLow, cgroup.MemoryHigh:
			if v == cgroup.V2 {
				if x.Unified == nil {
					x.Unified = map[string]string{}
				}
				x.Unified[string(op.Knob)] = op.Value
			}
		case cgroup.MemorySoftLimit:
			if n, err := strconv.ParseInt(op.Value, 10, 64); err == nil && v == cgroup.V1 && n > 0 {
				x.Reservation = n
			}
		}
		out[op.Cgroup] = x
	}
	return out
}

// dropGone leaves out the pods whose sandbox the runtime stopped, so their
// CPUs are free at once; a pod the source no longer lists is forgotten.
func (a *Agent) dropGone(rs []resolved) []resolved {
	if len(a.nriGone) == 0 {
		return rs
	}
	listed := map[string]bool{}
	out := rs[:0:0]
	for _, r := range rs {
		listed[r.plan.Name] = true
		// The pod cgroup names the UID (with _ for - under systemd): a new
		// pod of the same name is not the stopped one.
		uid, gone := a.nriGone[r.plan.Name]
		if !gone || uid == "" || !(strings.Contains(r.cgroup, uid) || strings.Contains(r.cgroup, strings.ReplaceAll(uid, "-", "_"))) {
			out = append(out, r)
		}
	}
	for name := range a.nriGone {
		if !listed[name] {
			delete(a.nriGone, name)
		}
	}
	if len(out) != len(rs) {
		// The last decision was made for the workloads of the same config,
		// which still lists these.
		a.mem.Last = nil
	}
	return out
}

// nriMetrics: which path the node is on, and what happened at creations.
func (m *metrics) registerNRI(state func() nri.State) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "locus_nri_connected",
		Help: "1 while the agent is registered with the runtime's NRI socket (containers are created pinned); 0 while only the reconcile loop applies decisions, after containers start."},
		func() float64 {
			if state().Connected {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "locus_nri_synchronizations_total",
			Help: "Synchronizations with the runtime over NRI (one per connection): each updates the running containers whose values differ."},
			func() float64 { return float64(state().Synchronized) }))
}

// startNRI runs the NRI plugin, when on, until the returned stop.
func (a *Agent) startNRI(ctx context.Context) (stop func()) {
	if !a.opts.NRI.Enabled || a.src == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	a.runCtx = ctx
	a.nri = nri.New(nriHandler{a}, nri.Options{Socket: a.opts.NRI.Socket, FailClosed: a.opts.NRI.FailClosed,
		Logger: a.log, OnChange: func() { a.wake(0) }})
	a.metrics.registerNRI(a.nri.State)
	done := make(chan struct{})
	go func() { a.nri.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// pinning is the status's word on the path: none outside Kubernetes mode.
func (a *Agent) pinning() *status.Pinning {
	switch {
	case a.src == nil:
		return nil
	case a.nri == nil:
		return &status.Pinning{Path: status.PinAfterStart, Reason: "NRI is off (--nri=false)"}
	}
	s := a.nri.State()
	if s.Connected {
		return &status.Pinning{Path: status.PinAtCreation, Runtime: s.Runtime, Since: s.Since.UTC()}
	}
	return &status.Pinning{Path: status.PinAfterStart, Reason: s.Reason, Since: s.Since.UTC()}
}

package nri

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/workload"
)

// Loop is what a LoopHandler is given of the agent: its reconcile loop, on
// which every call is carried out so that a decision at creation and a
// reconcile never run at once and both reach the one decide.Decide.
type Loop struct {
	// Call runs f on the loop; false if ctx ended first.
	Call func(ctx context.Context, f func()) bool
	// Answer decides the containers of reqs with the reconcile's own
	// decide.Decide (see Match); it runs on the loop.
	Answer func(reqs []Request) []Answer
	// Events receives the Warning of a container created unpinned.
	Events interface {
		Emit(typ, reason, workload, format string, args ...any)
	}
	// Wake asks for a reconcile now.
	Wake func()
	// Creates counts the containers asked about, by result.
	Creates *prometheus.CounterVec
	// Answers, when set, observes how long each call waited, by stage:
	// StageQueued until the loop took its batch up (not observed for a
	// call the loop did not take in time), StageAnswered until answered.
	Answers prometheus.ObserverVec
	// Source is the agent's workload source: when it offers a
	// source.Lookup, the pods it does not list yet are looked up (see
	// lookUp); else, or nil, their containers start unpinned.
	Source source.Source
}

// LoopHandler is the Handler that carries every call out on the agent's
// loop. It keeps the pods whose sandbox the runtime saw stop, read and
// changed on the loop only.
type LoopHandler struct {
	l   Loop
	ctx context.Context // the plugin's run: the calls made in the background end with it
	// stopped maps the pods whose sandbox stopped (namespace/name) to
	// their UID.
	stopped map[string]string

	mu   sync.Mutex
	open *batch // the requests waiting for the loop, still taking more
}

// batch is the requests that wait for the loop at the same time: one
// decision serves them all. In a burst each creation would otherwise decide
// the whole node on its own, one after another, and the last ones would
// wait past their timeout and start unpinned.
type batch struct {
	reqs []Request
	out  []Answer
	done chan struct{}
	// taken is when the loop took the batch up (zero: it did not), set
	// with out.
	taken time.Time
	// end closes done once: Call may report a call not carried out
	// (its ctx ended) that the loop carries out all the same, so both
	// run and fail can end the batch.
	end sync.Once
}

// finish ends b with out, decided from taken on, unless it has ended
// already.
func (b *batch) finish(out []Answer, taken time.Time) {
	b.end.Do(func() {
		b.out, b.taken = out, taken
		close(b.done)
	})
}

// NewLoopHandler returns the handler of a plugin running until ctx ends.
func NewLoopHandler(ctx context.Context, l Loop) *LoopHandler {
	return &LoopHandler{l: l, ctx: ctx, stopped: map[string]string{}}
}

// Stages of Loop.Answers.
const (
	StageQueued   = "queued"
	StageAnswered = "answered"
)

func (h *LoopHandler) Answer(ctx context.Context, reqs []Request) []Answer {
	start := time.Now()
	if h.l.Answers != nil {
		defer func() { h.l.Answers.WithLabelValues(StageAnswered).Observe(time.Since(start).Seconds()) }()
	}
	out, taken, ok := h.decide(ctx, reqs)
	if h.l.Answers != nil && !taken.IsZero() {
		h.l.Answers.WithLabelValues(StageQueued).Observe(taken.Sub(start).Seconds())
	}
	if !ok {
		// The loop is busy (a long reconcile): the containers of a pod the
		// last decision gave a cpuset get it, the others start as they are,
		// and the next reconcile applies the rest (the loop may still make
		// and save the decision once it gets to the call).
		return h.lastDecision(reqs)
	}
	if lk := source.LookupOf(h.l.Source); lk != nil {
		if refs := unknownPods(reqs, out); len(refs) > 0 {
			out = h.lookUp(ctx, lk, reqs, out, refs)
		}
	}
	for _, d := range out {
		if d.Err == nil {
			h.l.Creates.WithLabelValues("Decided").Inc()
		}
	}
	return out
}

// lastDecision answers reqs, which the loop did not decide in time, with
// the cpuset the last decision gave each one's pod (source.PodCPUSets: the
// value a container appearing in the pod's cgroup is written, pod scope
// only), so the container is still created on its CPUs; its memory QoS
// arrives by the reconcile, as for a container created unpinned. It decides
// nothing. A pod the last decision gave no such cpuset gets ErrNoDecision.
func (h *LoopHandler) lastDecision(reqs []Request) []Answer {
	sets := source.PodCPUSetsOf(h.l.Source)
	out := make([]Answer, len(reqs))
	for i, r := range reqs {
		out[i] = Answer{Err: ErrNoDecision, Exclusive: workload.AsksForCPUs(r.Pod.Labels, r.Pod.Annotations)}
		if sets == nil {
			continue
		}
		if set, ok := sets.PodCPUSet(source.PodRef{Namespace: r.Pod.Namespace, Name: r.Pod.Name, UID: r.Pod.UID}); ok && set.CPUs != "" {
			out[i].Values, out[i].Err = Values{CPUs: set.CPUs, Mems: set.Mems}, nil
			h.l.Creates.WithLabelValues(ResultLastDecision).Inc()
		}
	}
	return out
}

// ResultLastDecision is the result counted (Loop.Creates) of a container
// the loop did not decide in time, answered with its pod's cpuset from the
// last decision.
const ResultLastDecision = "LastDecision"

// decide asks the loop for the decision of reqs, in the batch of the
// requests waiting with them, and says when the loop took the batch up;
// false if ctx ended first (the loop still makes it later: what it returns
// is then not read).
func (h *LoopHandler) decide(ctx context.Context, reqs []Request) ([]Answer, time.Time, bool) {
	h.mu.Lock()
	b := h.open
	if b == nil {
		b = &batch{done: make(chan struct{})}
		h.open = b
		go func() {
			if !h.l.Call(h.ctx, func() { h.run(b) }) {
				h.fail(b) // not carried out: its requests fail open
			}
		}()
	}
	first := len(b.reqs)
	b.reqs = append(b.reqs, reqs...)
	h.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return nil, time.Time{}, false
	}
	if len(b.out) != len(b.reqs) {
		return nil, b.taken, false
	}
	return b.out[first : first+len(reqs)], b.taken, true
}

// run decides a batch on the loop; from then on it takes no more requests.
func (h *LoopHandler) run(b *batch) {
	taken := time.Now()
	reqs := h.take(b)
	for _, q := range reqs {
		// A new sandbox of a stopped pod; one of a pod created again under
		// the same name (another UID) leaves the old one stopped.
		key := q.Pod.Namespace + "/" + q.Pod.Name
		if uid, ok := h.stopped[key]; ok && (uid == "" || q.Pod.UID == "" || uid == q.Pod.UID) {
			delete(h.stopped, key)
		}
	}
	b.finish(h.l.Answer(reqs), taken)
}

// fail ends a batch the loop did not take: its requests get no decision.
func (h *LoopHandler) fail(b *batch) {
	h.take(b)
	b.finish(nil, time.Time{})
}

// take closes a batch to new requests and returns those it has.
func (h *LoopHandler) take(b *batch) []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open == b {
		h.open = nil
	}
	return b.reqs
}

func (h *LoopHandler) Unpinned(pod Pod, ctr Container, err error, blocked bool) {
	name := pod.Namespace + "/" + pod.Name
	reason, then := "CreatedUnpinned", "it starts as the runtime has it; the agent applies its values once it runs"
	if blocked {
		reason, then = "CreationRefused", "its creation is refused until they are (--nri-fail-closed); the kubelet retries"
	}
	h.l.Creates.WithLabelValues(reason).Inc()
	if source.Gone(err, pod.Namespace, pod.Name) {
		// Deleted before the kubelet got to its container: an Event would
		// name a pod that is no more, and nobody is left to read it.
		return
	}
	go h.l.Call(h.ctx, func() {
		h.l.Events.Emit(eventlog.Warning, reason, name, "container %q got no CPUs or memory QoS values at creation (%v): %s", ctr.Name, err, then)
	})
}

// Gone frees a pod's CPUs as soon as its sandbox stops: the pod is left out
// of the decisions (DropStopped) until the source no longer lists it. A
// container stopping frees nothing (the CPUs are the pod's) but is looked
// at now.
func (h *LoopHandler) Gone(pod Pod, ctr Container) {
	go h.l.Call(h.ctx, func() {
		if ctr.ID == "" {
			h.stopped[pod.Namespace+"/"+pod.Name] = pod.UID
		}
		h.l.Wake()
	})
}

// DropStopped leaves out of ws, on the loop, the pods whose sandbox the
// runtime stopped, so their CPUs are free at once; a pod ws no longer lists
// is forgotten. pod gives a workload's name and cgroup. dropped says
// whether any was left out. With h nil (no plugin) ws is kept.
func DropStopped[W any](h *LoopHandler, ws []W, pod func(W) (name, cgroup string)) (kept []W, dropped bool) {
	if h == nil || len(h.stopped) == 0 {
		return ws, false
	}
	listed := map[string]bool{}
	out := ws[:0:0]
	for _, w := range ws {
		name, cg := pod(w)
		listed[name] = true
		// The pod cgroup names the UID (with _ for - under systemd): a new
		// pod of the same name is not the stopped one.
		uid, gone := h.stopped[name]
		if !gone || uid == "" || !(strings.Contains(cg, uid) || strings.Contains(cg, strings.ReplaceAll(uid, "-", "_"))) {
			out = append(out, w)
		}
	}
	for name := range h.stopped {
		if !listed[name] {
			delete(h.stopped, name)
		}
	}
	return out, len(out) != len(ws)
}

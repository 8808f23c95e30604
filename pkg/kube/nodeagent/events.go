package nodeagent

import (
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/eventlog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
)

// Component is the events' reporting component (source.component and
// reportingComponent): what `kubectl describe pod` shows under From.
const Component = "locus"

// forgetRefsAfter is how long a pod that left the node still receives the
// agent's events about it (CPUsReleased, WorkloadRemoved come after).
const forgetRefsAfter = 10 * time.Minute

// eventCacheSize bounds each of the recorder's three event caches (the
// aggregation of similar events, the count of repeated ones, the per-object
// spam filter). client-go sizes them (4096) for a whole cluster's
// controllers; the agent speaks of one node's pods, and with pods churning
// every deleted pod's entries would stay until that many others push them
// out: several MiB of keys about pods long gone. 1024 covers a node's pods
// (the kubelet's default limit is 110) several times over; an entry pushed
// out only means a later event of that pod is posted anew rather than
// counted into an earlier one.
const eventCacheSize = 1024

// Events are posted at up to EventQPS a second, bursts of EventBurst (the
// kubelet's own event limits). With client-go's default client limit (5 a
// second, shared with everything else) a node churning pods makes events
// faster than they are posted: they queue in memory, post minutes late,
// and past a thousand are dropped.
const (
	EventQPS   = 50
	EventBurst = 100
)

// eventPoster posts the agent's events as Kubernetes events, through
// client-go's recorder: asynchronous, with its aggregation and spam filter,
// so a burst of events never blocks the reconcile loop.
type eventPoster struct {
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder // nil: quiet
	node        *corev1.ObjectReference

	mu   sync.Mutex
	refs map[string]seenRef // by workload name (namespace/pod)
	now  func() time.Time
}

type seenRef struct {
	ref  *corev1.ObjectReference
	seen time.Time
}

// newEventPoster posts to sink; a quiet one (a dry run) posts nothing.
func newEventPoster(sink record.EventSink, node string, quiet bool) *eventPoster {
	p := &eventPoster{
		// As the kubelet does, a node's events name it by its name for UID.
		node: &corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node)},
		refs: map[string]seenRef{},
		now:  time.Now,
	}
	if quiet {
		return p
	}
	p.broadcaster = record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: eventCacheSize}))
	p.broadcaster.StartRecordingToSink(&reportingSink{EventSink: sink, instance: truncate(Component+"-"+node, 128)})
	p.recorder = p.broadcaster.NewRecorder(kubeclient.Scheme, corev1.EventSource{Component: Component, Host: node})
	return p
}

func (p *eventPoster) stop() {
	if p.broadcaster != nil {
		p.broadcaster.Shutdown()
	}
}

// post sends one agent event: on its pod, or on the Node for node-wide ones.
// Events of workloads that are not pods (`locus run` leases) stay local.
func (p *eventPoster) post(e eventlog.Event) {
	if p.recorder == nil {
		return
	}
	ref := p.node
	if e.Workload != "" {
		p.mu.Lock()
		r, ok := p.refs[e.Workload]
		p.mu.Unlock()
		if !ok {
			return
		}
		ref = r.ref
	}
	p.recorder.Event(ref, e.Type, e.Reason, e.Message)
}

func (p *eventPoster) onPod(pod *corev1.Pod, typ, reason, msg string) {
	p.onObject(podRef(pod), typ, reason, msg)
}

func (p *eventPoster) onObject(ref *corev1.ObjectReference, typ, reason, msg string) {
	if p.recorder != nil {
		p.recorder.Event(ref, typ, reason, msg)
	}
}

// track records the references of the pods now managed; those of pods gone
// are kept a while for the events about their removal.
func (p *eventPoster) track(live map[string]*corev1.Pod) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, pod := range live {
		p.refs[name] = seenRef{ref: podRef(pod), seen: now}
	}
	for name, r := range p.refs {
		if now.Sub(r.seen) > forgetRefsAfter {
			delete(p.refs, name)
		}
	}
}

func podRef(pod *corev1.Pod) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion}
}

// reportingSink fills in the reporting controller and instance, which the
// recorder leaves empty, so that every view of the event names Locus.
type reportingSink struct {
	record.EventSink
	instance string
}

func (s *reportingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	e.ReportingController, e.ReportingInstance = Component, s.instance
	out, err := s.EventSink.Create(e)
	if apierrors.IsNotFound(err) {
		// Only a missing namespace fails a create so: the pod went with
		// it, and nobody is left to read the event. Taken as posted, so
		// the recorder does not log an error for every pod of it.
		return e, nil
	}
	return out, err
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

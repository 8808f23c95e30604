package plugin

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/kube/podplan"
)

// waiting are the opted-in pods no node could take. The plugin's own
// informers see CPUs come free (a report, a deleted pod); the framework's
// events for the same changes may reach the scheduling queue before the
// plugin's state has them, and a pod retried then would fail again and
// wait for the next event. So once the state has a change that frees CPUs,
// the plugin activates these pods itself.
type waiting struct {
	mu   sync.Mutex
	pods map[string]*v1.Pod // by namespace/name
}

func (w *waiting) add(pod *v1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pods == nil {
		w.pods = map[string]*v1.Pod{}
	}
	w.pods[podplan.Name(pod)] = pod
}

func (w *waiting) remove(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pods, key)
}

func (w *waiting) list() map[string]*v1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pods) == 0 {
		return nil
	}
	out := make(map[string]*v1.Pod, len(w.pods))
	for k, p := range w.pods {
		out[k] = p
	}
	return out
}

// take lists the pods and forgets them.
func (w *waiting) take() map[string]*v1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.pods
	w.pods = nil
	if len(out) == 0 {
		return nil
	}
	return out
}

// activate moves the waiting pods to the active queue (pods being
// scheduled right now are retried once they come back).
func (p *Plugin) activate(logger klog.Logger) {
	if pods := p.waiting.list(); pods != nil {
		logger.V(4).Info("CPUs freed: retrying waiting pods", "plugin", Name, "pods", len(pods))
		p.handle.Activate(logger, pods)
	}
}

// PostFilter records an opted-in pod that fits no node. It never makes
// room itself: the status is Unschedulable with no reason of its own.
func (p *Plugin) PostFilter(_ context.Context, cs *framework.CycleState, pod *v1.Pod, _ framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	if _, ok := readState(cs); ok {
		p.waiting.add(pod)
	}
	return nil, framework.NewStatus(framework.Unschedulable)
}

package plugin

import (
	"context"
	"encoding/json"
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/workload"
)

var errNoState = errors.New(Name + ": no cycle state (PreFilter did not run)")

// Reserve assumes the pod's CPUs on the chosen node, so that the next pods
// are placed around them before the pod is bound and long before the agent
// reports them. If the node changed since Filter, the pod is placed again
// on its current state; when it no longer fits, the pod is unschedulable
// for now and is tried again.
func (p *Plugin) Reserve(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	s, ok := readState(cs)
	if !ok {
		return nil // not a pod of ours
	}
	view := s.snap.Get(node)
	pl, err := core.Place(view, 0, s.req)
	if err != nil {
		return unfitStatus(ctx, pod, node, err, s.req)
	}
	final, err := p.cluster.Assume(podplan.Name(pod), node, view, pl, s.req)
	if err != nil {
		p.waiting.add(pod)
		return unfitStatus(ctx, pod, node, err, s.req)
	}
	parts := ""
	if cs := s.req.Containers; len(cs) > 0 && !final.Moves {
		// The agent divides the CPUs itself and checks this against its
		// own; one that cannot be made is its to say (the pod's counts
		// made its request, so it can).
		if p, err := cpualloc.Partition(view.Topology(), final.Result.CPUs, cs); err == nil {
			parts = workload.FormatContainerCPUSets(p)
		} else {
			klog.FromContext(ctx).Info("the pod's CPUs cannot be divided among its containers", "pod", klog.KObj(pod), "node", node, "err", err)
		}
	}
	s.mu.Lock()
	s.final, s.parts = &final, parts
	s.mu.Unlock()
	klog.FromContext(ctx).V(2).Info("CPUs assumed", "pod", klog.KObj(pod), "node", node,
		"cpus", final.Result.CPUs.String(), "numaNodes", final.Result.NUMANodes, "policy", final.Result.Policy, "afterMoves", final.Moves)
	return nil
}

// Unreserve releases what Reserve assumed: the pod was not bound.
func (p *Plugin) Unreserve(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, node string) {
	if _, ok := readState(cs); ok {
		p.cluster.Forget(podplan.Name(pod), node)
		p.activate(klog.FromContext(ctx))
	}
}

// PreBind writes the decision on the pod (locus.io/resource-status, and
// locus.io/container-cpusets for a container-scope pod), signed for the pod
// on node (signed), before
// it is bound, so the agent finds it as soon as the pod reaches the node;
// where the plugin's Bind runs first (bindsFirst), Bind writes it with
// the binding instead and PreBind does nothing.
func (p *Plugin) PreBind(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	s, ok := readState(cs)
	if !ok || p.bindsFirst() {
		return nil
	}
	ann, err := p.signed(ctx, s, pod, node)
	if err != nil {
		return framework.AsStatus(err)
	}
	if ann == nil {
		return framework.AsStatus(errors.New(Name + ": PreBind without Reserve"))
	}
	if len(ann) == 0 {
		return nil // placed without a decision: nothing to write
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return framework.AsStatus(err)
	}
	_, err = p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: Name})
	if err != nil {
		return framework.AsStatus(err)
	}
	return nil
}

// Bind binds an opted-in pod with its decision as an annotation of the
// Binding, which the apiserver copies onto the pod in the same write: the
// pod reaches its node with its CPUs, and costs the cluster one write,
// like any other pod, instead of a patch and a binding (at scale the
// apiserver's work is what bounds a scheduler's throughput). Other pods
// are left to the next binder, DefaultBinder.
func (p *Plugin) Bind(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	s, ok := readState(cs)
	if !ok {
		return framework.NewStatus(framework.Skip)
	}
	ann, err := p.signed(ctx, s, pod, node)
	if err != nil {
		return framework.AsStatus(err)
	}
	if ann == nil {
		return framework.AsStatus(errors.New(Name + ": Bind without Reserve"))
	}
	if len(ann) == 0 {
		ann = nil
	}
	b := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Annotations: ann},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		return framework.AsStatus(err)
	}
	return nil
}

// bindsFirst says whether the profile runs this plugin's Bind before any
// other binder: the configuration enables it at bind as well as in
// multiPoint (as DefaultConfig does), which puts it ahead of DefaultBinder.
// A configuration that only enables it in multiPoint puts it after, where
// it never runs, so PreBind writes the decision. Known once the framework
// is built; asked at the first PreBind.
func (p *Plugin) bindsFirst() bool {
	p.bindOnce.Do(func() {
		l, ok := p.handle.(interface{ ListPlugins() *config.Plugins })
		if !ok {
			return
		}
		if ps := l.ListPlugins(); ps != nil && len(ps.Bind.Enabled) > 0 {
			p.binds = ps.Bind.Enabled[0].Name == Name
		}
	})
	return p.binds
}

// ResourceStatus is the annotation's content for a placement.
func ResourceStatus(pl core.Placement) workload.ResourceStatus {
	return workload.ResourceStatus{CPUs: pl.Result.CPUs, NUMANodes: pl.Result.NUMANodes, Policy: pl.Result.Policy}
}

package plugin

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/workload"
)

// watch feeds the cluster state: pods and nodes (their CPU capacity, and
// their removal) from the framework's informers (the scheduler's pod informer already leaves out finished
// pods), NodeResourceTopology objects from an informer of its own.
func (p *Plugin) watch(ctx context.Context, reports Reports) error {
	logger := klog.FromContext(ctx)
	start := time.Now()
	f := p.handle.SharedInformerFactory()
	trimInformers(logger, f.Core().V1().Pods().Informer(), f.Core().V1().Nodes().Informer())
	podReg, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.onPod(logger, obj) },
		UpdateFunc: func(_, obj any) { p.onPod(logger, obj) },
		DeleteFunc: func(obj any) {
			if pod, ok := untombstone(obj).(*v1.Pod); ok {
				p.podGone(logger, podplan.Name(pod))
			}
		},
	})
	if err != nil {
		return fmt.Errorf("%s: pod informer: %w", Name, err)
	}
	nodeReg, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.onNode(logger, obj) },
		UpdateFunc: func(_, obj any) { p.onNode(logger, obj) },
		DeleteFunc: func(obj any) {
			if node, ok := untombstone(obj).(*v1.Node); ok {
				p.cluster.DeleteNode(node.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("%s: node informer: %w", Name, err)
	}
	nrtInf := reportInformer(reports, reportPageSize)
	// The store keeps a name and a version per report, not the report.
	slim := slimmer{store: func() cache.Store { return p.reports }}
	if err := nrtInf.SetTransform(slim.slim); err != nil {
		return fmt.Errorf("%s: NodeResourceTopology informer: %w", Name, err)
	}
	nrtReg, err := nrtInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.onNRT(logger, obj) },
		UpdateFunc: func(_, obj any) { p.onNRT(logger, obj) },
		DeleteFunc: func(obj any) {
			if name := nrtName(obj); name != "" {
				p.cluster.DeleteNRT(name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("%s: NodeResourceTopology informer: %w", Name, err)
	}
	p.reports = nrtInf.GetStore()
	go nrtInf.RunWithContext(ctx)
	p.synced = []cache.InformerSynced{podReg.HasSynced, nodeReg.HasSynced, nrtReg.HasSynced}
	go p.markSynced(ctx, start)
	return nil
}

// onPod records a bound pod and the decision it carries. A decision that
// does not parse, or is not signed for the pod (believed), counts for
// nothing here: the agent chooses the CPUs itself (and reports them) or
// runs the pod in the shared pool.
func (p *Plugin) onPod(logger klog.Logger, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	key := podplan.Name(pod)
	p.waiting.remove(key)
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		p.podGone(logger, key)
		return
	}
	var decision *workload.Assignment
	a, ok, err := workload.ScheduledCPUs(pod)
	switch {
	case ok && !p.believed(logger, pod):
	case err != nil:
		logger.V(2).Info("ignoring an unreadable decision", "pod", klog.KObj(pod), "annotation", workload.AnnotationResourceStatus, "err", err)
	case ok:
		decision = &a
	}
	if decision == nil {
		p.cluster.SetPod(key, pod.Spec.NodeName, nil)
		return
	}
	// The decision holds the pod's memory on its node until the report
	// lists the pod. Resources that cannot be read hold none: PreFilter
	// refuses such a pod, so only one bound some other way has them.
	need, _ := workload.PodMemory(pod)
	p.cluster.SetPodMemory(key, pod.Spec.NodeName, decision, need)
}

// onNode records the node's CPU capacity, which its NodeResourceTopology
// must match (Filter would otherwise read it from every node object in
// every cycle).
func (p *Plugin) onNode(logger klog.Logger, obj any) {
	node, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	cpus := node.Status.Capacity[v1.ResourceCPU]
	n := int64(0) // out of bounds: as a node without a capacity, which no report matches
	if quantity.Bounded(&cpus) {
		n = cpus.Value()
	}
	if p.cluster.SetNodeCPUs(node.Name, n) {
		p.activate(logger)
	}
}

func (p *Plugin) onNRT(logger klog.Logger, obj any) {
	var r *received
	name := nrtName(obj)
	switch o := obj.(type) {
	case *nrtEntry:
		r = o.take()
	case *unstructured.Unstructured:
		r = &received{u: o}
	}
	if r == nil {
		return
	}
	o, err := r.o, r.err
	if o == nil && err == nil {
		o, err = decodeReport(r.u)
	}
	if err != nil {
		// Schema validation makes this unlikely; the node is then as one
		// without a report.
		logger.Error(err, "cannot decode NodeResourceTopology", "name", name)
		p.cluster.DeleteNRT(name)
		return
	}
	// A node whose agent was silent takes pods again with this report:
	// pods refused for it are worth another try.
	last := p.cluster.Heartbeat(name)
	back := !last.IsZero() && p.args.NRTMaxAge.Duration > 0 && time.Since(last) > p.args.NRTMaxAge.Duration
	freed := p.cluster.SetNRT(name, o)
	if err := p.cluster.ReportError(name); err != nil {
		// The node takes no pod of this plugin until its agent reports
		// again; every other node goes on as before.
		logger.Error(err, "NodeResourceTopology refused", "node", name)
	}
	if freed || back {
		p.activate(logger)
	}
}

// podGone frees a pod's CPUs and retries the pods waiting for some.
func (p *Plugin) podGone(logger klog.Logger, key string) {
	p.waiting.remove(key)
	if p.cluster.DeletePod(key) {
		p.activate(logger)
	}
}

func untombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

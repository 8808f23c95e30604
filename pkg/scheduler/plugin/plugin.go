// Package plugin is the kube-scheduler framework adapter of Locus's
// topology-aware CPU scheduling: for pods with cpuset-scheduler "true" it
// chooses the node and the exact CPUs together (pkg/scheduler/core decides),
// keeps the choice while the pod is bound, and writes it on the pod as
// locus.io/resource-status for the node agent to apply. Other pods are left
// to the other plugins.
package plugin

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/decisionsig/keyfile"
	"github.com/locus-project/locus/pkg/scheduler/core"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "LocusCPUTopology"

// Args are the plugin's arguments (pluginConfig[].args).
type Args struct {
	// ScoringStrategy ranks the nodes where a pod fits equally well:
	// MostAllocated (default) packs, LeastAllocated spreads.
	ScoringStrategy core.Scoring `json:"scoringStrategy,omitempty"`
	// NUMAStrategy picks the CPUs inside a node, as the agent's allocator
	// does: most-allocated (default) or least-allocated.
	NUMAStrategy cpualloc.NUMAStrategy `json:"numaStrategy,omitempty"`
	// NRTMaxAge is how old a node's NodeResourceTopology heartbeat may be
	// before the node takes no more pods of this plugin: its agent has
	// stopped, and nothing would apply their CPUs. Default 3m (three of the
	// agent's default --nrt-heartbeat); 0s turns the check off.
	NRTMaxAge *metav1.Duration `json:"nrtMaxAge,omitempty"`
	// DecisionKeyFile holds the keys decisions are signed with (one
	// "<id> <base64 key>" a line, the first signing; pkg/decisionsig), read
	// again when it changes. The node agents apply a decision only under
	// its signature, and the plugin counts a pod's decision only under it.
	// Empty: decisions are written unsigned (no agent applies them).
	DecisionKeyFile string `json:"decisionKeyFile,omitempty"`
}

// DefaultNRTMaxAge is NRTMaxAge when the configuration leaves it out.
const DefaultNRTMaxAge = 3 * time.Minute

// Validate checks the values and fills in the defaults.
func (a *Args) Validate() error {
	switch a.ScoringStrategy {
	case "":
		a.ScoringStrategy = core.MostAllocated
	case core.MostAllocated, core.LeastAllocated:
	default:
		return fmt.Errorf("%s args: scoringStrategy %q: want %s or %s", Name, a.ScoringStrategy, core.MostAllocated, core.LeastAllocated)
	}
	switch {
	case a.NRTMaxAge == nil:
		a.NRTMaxAge = &metav1.Duration{Duration: DefaultNRTMaxAge}
	case a.NRTMaxAge.Duration < 0:
		return fmt.Errorf("%s args: nrtMaxAge %s: want a positive duration, or 0s for no check", Name, a.NRTMaxAge.Duration)
	}
	switch a.NUMAStrategy {
	case "":
		a.NUMAStrategy = cpualloc.MostAllocated
	case cpualloc.MostAllocated, cpualloc.LeastAllocated:
	default:
		return fmt.Errorf("%s args: numaStrategy %q: want %s or %s", Name, a.NUMAStrategy, cpualloc.MostAllocated, cpualloc.LeastAllocated)
	}
	return nil
}

// Plugin is the framework plugin. Its state is a core.Cluster fed by the
// framework's pod and node informers and its own NodeResourceTopology
// informer.
type Plugin struct {
	args    Args
	handle  framework.Handle
	cluster *core.Cluster
	synced  []cache.InformerSynced
	// reports is the NodeResourceTopology informer's store: names and
	// versions (nrtEntry), the reports themselves being in the cluster.
	reports cache.Store
	ready   atomic.Bool
	waited  atomic.Bool
	// syncDone is closed once ready is set (see markSynced).
	syncDone chan struct{}
	// early are the opted-in pods refused before ready, for markSynced to
	// retry; waiting, those no node could take.
	early   waiting
	waiting waiting
	slots   nodeSlots
	sweeper core.Sweeper
	last    atomic.Pointer[cycleState] // the state PreFilter wrote last (see state)

	bindOnce sync.Once
	binds    bool // see bindsFirst

	keys *keyfile.File // nil without DecisionKeyFile
	dra  *draSource    // nil where no DRA objects can be read
}

var (
	_ framework.PreFilterPlugin   = (*Plugin)(nil)
	_ framework.FilterPlugin      = (*Plugin)(nil)
	_ framework.PostFilterPlugin  = (*Plugin)(nil)
	_ framework.PreScorePlugin    = (*Plugin)(nil)
	_ framework.ScorePlugin       = (*Plugin)(nil)
	_ framework.ReservePlugin     = (*Plugin)(nil)
	_ framework.PreBindPlugin     = (*Plugin)(nil)
	_ framework.BindPlugin        = (*Plugin)(nil)
	_ framework.EnqueueExtensions = (*Plugin)(nil)
)

// New is the plugin factory (app.WithPlugin(plugin.Name, plugin.New)). It
// reads NodeResourceTopology objects through the scheduler's kubeconfig.
func New(ctx context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	reports, err := NewReports(h.KubeConfig())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return NewWithClient(ctx, obj, h, reports)
}

// NewWithClient is New with the client NodeResourceTopology objects are
// read through (a fake one in tests).
func NewWithClient(ctx context.Context, obj runtime.Object, h framework.Handle, reports Reports) (*Plugin, error) {
	var args Args
	if err := decodeArgs(obj, &args); err != nil {
		return nil, err
	}
	p := &Plugin{args: args, handle: h, cluster: core.NewCluster(), syncDone: make(chan struct{})}
	if args.DecisionKeyFile != "" {
		p.keys = keyfile.New(args.DecisionKeyFile)
		if _, _, err := p.keys.Keys(); err != nil {
			return nil, fmt.Errorf("%s args: decisionKeyFile: %w", Name, err)
		}
	} else {
		klog.FromContext(ctx).Info("no decisionKeyFile: decisions are written unsigned, and no Locus agent applies them", "plugin", Name)
	}
	if l := h.SnapshotSharedLister(); l != nil {
		p.slots.list = l.NodeInfos().List
	}
	p.dra = newDRASource(ctx, h)
	if err := p.watch(ctx, reports); err != nil {
		return nil, err
	}
	return p, nil
}

func decodeArgs(obj runtime.Object, args *Args) error {
	if err := frameworkruntime.DecodeInto(obj, args); err != nil {
		return fmt.Errorf("%s args: %w", Name, err)
	}
	return args.Validate()
}

// Name implements framework.Plugin.
func (p *Plugin) Name() string { return Name }

// Cluster is the plugin's state (for tests and benchmarks).
func (p *Plugin) Cluster() *core.Cluster { return p.cluster }

// firstSyncWait is how long the first scheduling cycle of an opted-in pod
// waits for the plugin's informers (waitSynced). The whole scheduling
// queue, other pods too, waits with that cycle, and at 5000 nodes on a
// loaded control plane the sync took 29 s (docs/benchmarks.md), so the wait
// is short: a pod refused before the sync ends is retried when it ends
// (markSynced).
const firstSyncWait = 5 * time.Second

// waitSynced holds the first scheduling cycle until every event of the
// initial lists reached the cluster state: before that, pods already bound
// would look absent and their CPUs free. It waits once (up to
// firstSyncWait); later cycles only check, so that a slow sync, a missing
// CRD or permission does not stall the scheduler for everyone.
func (p *Plugin) waitSynced(ctx context.Context) bool {
	if p.ready.Load() || p.waited.Swap(true) {
		return p.ready.Load()
	}
	t := time.NewTimer(firstSyncWait)
	defer t.Stop()
	select {
	case <-p.syncDone:
	case <-t.C:
	case <-ctx.Done():
	}
	return p.ready.Load()
}

// markSynced sets ready once every initial list has reached the cluster
// state, however long that takes, and retries the pods refused meanwhile:
// the framework has no event of its own for the end of the sync, and would
// leave them in its unschedulable pool until an event the plugin
// registered, or for its 5 minutes. (A report's own activation does not do:
// it runs inside the informer's handler, before the informer counts itself
// synced, so the retry it starts may be refused again.)
func (p *Plugin) markSynced(ctx context.Context, start time.Time) {
	if !cache.WaitForCacheSync(ctx.Done(), p.synced...) {
		return
	}
	p.ready.Store(true)
	close(p.syncDone)
	logger := klog.FromContext(ctx)
	early := p.early.take()
	logger.Info("CPU state synced", "plugin", Name, "after", time.Since(start).Round(time.Millisecond),
		"reports", len(p.reports.ListKeys()), "podsRetried", len(early))
	if early != nil {
		p.handle.Activate(logger, early)
	}
}

// EventsToRegister implements framework.EnqueueExtensions: a pod rejected
// here may fit after a bound pod goes, a node arrives or grows, or the pod
// itself is changed. NodeResourceTopology changes are not registered: the
// plugin activates waiting pods itself once its state has them (see
// waiting), which also spares the scheduler a second watch on them.
func (p *Plugin) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable}},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: afterPodDelete},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Update}, QueueingHintFn: afterPodUpdate},
	}, nil
}

// afterPodDelete: only a bound pod held CPUs.
func afterPodDelete(_ klog.Logger, _ *v1.Pod, oldObj, _ any) (framework.QueueingHint, error) {
	if old, ok := oldObj.(*v1.Pod); ok && old.Spec.NodeName == "" {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// afterPodUpdate: the rejected pod itself was changed (its cpu-policy
// fixed, say); another pod's update frees nothing.
func afterPodUpdate(_ klog.Logger, pod *v1.Pod, _, newObj any) (framework.QueueingHint, error) {
	if updated, ok := newObj.(*v1.Pod); ok && updated.UID == pod.UID {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

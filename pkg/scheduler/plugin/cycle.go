package plugin

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/workload"
)

const stateKey framework.StateKey = Name

// cycleState is one pod's scheduling cycle: its request, the nodes'
// views taken once in PreFilter and the request's answer on each. Filter,
// Score and Reserve place the pod on the same view, and a view remembers
// its placements, so Score and Reserve compute nothing again.
type cycleState struct {
	req  core.Request
	snap *core.Snapshot
	now  time.Time             // when the snapshot was taken: reports' age is measured to it
	cs   *framework.CycleState // the cycle's, which holds this state
	// pending says some claim of the pod was not allocated when the
	// cycle began: the DynamicResources plugin allocates it in this
	// cycle, and realign places the CPUs next to its devices.
	pending bool
	// foresee allocates the pending claims on each node as the
	// DynamicResources plugin will, so that Score follows the devices
	// (pending.go); nil where none is foreseen.
	foresee *structured.Allocator
	// sweep is the request's answer on every node of snap, by slot (nil
	// for a request a view does not remember): Filter and Score read one
	// word per node instead of the node's view.
	sweep *core.Sweep
	fresh bool // every node's report was fresh at now

	mu    sync.Mutex
	final *core.Placement // set by Reserve
	// parts is a container-scope pod's partition of final's CPUs, as
	// the annotation writes it ("" for none), set by Reserve.
	parts string
	// realigned says the decision was checked against the devices
	// allocated in the cycle (realign).
	realigned bool
}

// Clone shares the state: placements depend only on the snapshot, which
// every copy shares.
func (s *cycleState) Clone() framework.StateData { return s }

// annotations are what the decision writes on the pod, nil before Reserve:
// the resource-status and, for a container-scope pod, its partition.
func (s *cycleState) annotations() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final == nil {
		return nil
	}
	if s.final.Moves {
		// The pod fits once the agent moves pods off a NUMA node: the CPUs
		// are the agent's to choose after the moves, and a decision naming
		// CPUs a movable pod holds now would be refused as a conflict. No
		// decision: the agent places the pod as one bound without this
		// scheduler.
		return map[string]string{}
	}
	out := map[string]string{workload.AnnotationResourceStatus: ResourceStatus(*s.final).Format()}
	if s.parts != "" {
		out[workload.AnnotationContainerCPUSets] = s.parts
	}
	return out
}

// state is the cycle's state for Filter and Score, which read it for
// every node: the one PreFilter wrote last when cs is its cycle's (no
// look-up in cs's sync.Map), else the one in cs (preemption's copies).
func (p *Plugin) state(cs *framework.CycleState) (*cycleState, bool) {
	if s := p.last.Load(); s != nil && s.cs == cs {
		return s, true
	}
	return readState(cs)
}

func readState(cs *framework.CycleState) (*cycleState, bool) {
	d, err := cs.Read(stateKey)
	if err != nil {
		return nil, false
	}
	s, ok := d.(*cycleState)
	return s, ok
}

// PreFilter reads the pod's request, its CPUs and its memory; pods that
// did not opt in are skipped (Filter and Score too). A malformed request is
// unresolvable, with what to fix: no node can bind it.
func (p *Plugin) PreFilter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	if !workload.OptedIn(pod) {
		return nil, framework.NewStatus(framework.Skip)
	}
	r, err := workload.ParseCPURequest(pod)
	if err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	need, err := workload.PodMemory(pod)
	if err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	if !p.waitSynced(ctx) {
		// markSynced sets ready, then retries the early pods: a pod added
		// here after it took them finds ready set.
		p.early.add(pod)
		if !p.ready.Load() {
			return nil, framework.NewStatus(framework.Unschedulable,
				"the scheduler has not read every NodeResourceTopology and pod yet (is the NodeResourceTopology CRD installed, and may the scheduler list it?)")
		}
		p.early.remove(podplan.Name(pod))
	}
	s := &cycleState{
		req: core.Request{CPURequest: r, NUMAStrategy: p.args.NUMAStrategy, Scoring: p.args.ScoringStrategy, Memory: need,
			Devices: p.podDevices(ctx, pod)},
		snap: p.cluster.Snapshot(), now: time.Now(), cs: cs,
	}
	s.pending, s.foresee = p.pendingClaims(ctx, pod)
	s.sweep = p.sweeper.Sweep(s.snap, s.req)
	s.fresh = s.sweep.AllFresh(s.now, p.args.NRTMaxAge.Duration)
	cs.Write(stateKey, s)
	p.last.Store(s)
	// Where Filter would pass every node the framework has, it need not
	// run: the framework then skips it (and its own work around it) on
	// every node, preemption's what-ifs included. Score still runs.
	if s.fresh && p.slots.allFit(s.snap, s.sweep) {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

// PreFilterExtensions: none. Preemption's what-ifs (removing victims) are
// not simulated on CPU sets.
func (p *Plugin) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter passes a node whose NodeResourceTopology is there, matches the
// node, and has CPUs for the pod under its policy; the node's view keeps
// the placement for Score and Reserve.
func (p *Plugin) Filter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, ok := p.state(cs)
	if !ok {
		return framework.AsStatus(errNoState)
	}
	node := ni.Node()
	if node == nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "node not found")
	}
	// The node's capacity is checked against its report in its view (see
	// onNode).
	slot := p.slots.slot(s.snap, ni)
	if _, fits := s.sweep.Score(slot); fits && s.fresh {
		return nil
	}
	// The node does not fit, or some report is old: the node's view says
	// why (and is what the sweep answered from).
	v := s.snap.At(slot)
	if err := core.Fresh(v, s.now, p.args.NRTMaxAge.Duration); err != nil {
		return unfitStatus(ctx, pod, node.Name, err, s.req)
	}
	if _, err := core.FitsScore(v, 0, s.req); err != nil {
		return unfitStatus(ctx, pod, node.Name, err, s.req)
	}
	return nil
}

func unfitStatus(ctx context.Context, pod *v1.Pod, node string, err error, req core.Request) *framework.Status {
	u, ok := err.(*core.Unfit)
	if !ok {
		return framework.AsStatus(err)
	}
	klog.FromContext(ctx).V(4).Info("node does not fit the pod's CPUs", "pod", klog.KObj(pod), "node", node, "why", u.Detail)
	code := framework.UnschedulableAndUnresolvable
	if u.Kind == core.Insufficient {
		code = framework.Unschedulable
	}
	return framework.NewStatus(code, u.Reason(req))
}

// PreScore skips scoring for pods that did not opt in.
func (p *Plugin) PreScore(_ context.Context, cs *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	if _, ok := readState(cs); !ok {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Score is the score of the placement Filter found: the sweep's, or the
// one the view remembers; for a pod with pending claims, of the
// placement next to the devices they would be allocated on the node.
func (p *Plugin) Score(ctx context.Context, cs *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := p.state(cs)
	if !ok {
		return 0, framework.AsStatus(errNoState)
	}
	slot := p.slots.slot(s.snap, ni)
	if s.foresee != nil && ni.Node() != nil {
		if score, ok := p.foreseenScore(ctx, s, s.snap.At(slot), ni.Node()); ok {
			return score, nil
		}
	}
	if score, fits := s.sweep.Score(slot); fits {
		return score, nil
	}
	score, err := core.ScoreOf(s.snap.At(slot), s.req)
	if err != nil {
		return 0, nil // Filter let it through: it cannot fail here
	}
	return score, nil
}

// ScoreExtensions: NormalizeScore.
func (p *Plugin) ScoreExtensions() framework.ScoreExtensions { return p }

// NormalizeScore maps [0, core.MaxScore] onto the framework's range. The
// mapping is fixed, not relative to this cycle's nodes, so a locality step
// weighs the same in every cycle.
func (p *Plugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	for i := range scores {
		scores[i].Score = scores[i].Score * framework.MaxNodeScore / core.MaxScore
	}
	return nil
}

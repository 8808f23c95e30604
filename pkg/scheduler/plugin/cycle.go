package plugin

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/scheduler/core"
)

const stateKey framework.StateKey = Name

// cycleState is one pod's scheduling cycle: its request, the nodes' views
// taken once in PreFilter, and every node's placement found by Filter, so
// that Score and Reserve compute nothing again.
type cycleState struct {
	req  core.Request
	snap map[string]*core.NodeView

	mu     sync.Mutex
	placed map[string]placed
	final  *core.Placement // set by Reserve
}

type placed struct {
	view *core.NodeView
	p    core.Placement
}

// Clone shares the state: placements depend only on the snapshot, which
// every copy shares, so a copy's cache is as good as the original's.
func (s *cycleState) Clone() framework.StateData { return s }

func (s *cycleState) get(node string) (placed, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pl, ok := s.placed[node]
	return pl, ok
}

func (s *cycleState) put(node string, pl placed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.placed[node] = pl
}

func readState(cs *framework.CycleState) (*cycleState, bool) {
	d, err := cs.Read(stateKey)
	if err != nil {
		return nil, false
	}
	s, ok := d.(*cycleState)
	return s, ok
}

// PreFilter reads the pod's request; pods that did not opt in are skipped
// (Filter and Score too). A malformed request is unresolvable, with what to
// fix: no node can bind it.
func (p *Plugin) PreFilter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	if !podplan.OptedIn(pod) {
		return nil, framework.NewStatus(framework.Skip)
	}
	r, err := podplan.ParseCPURequest(pod)
	if err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	if !p.waitSynced(ctx) {
		p.waiting.add(pod)
		return nil, framework.NewStatus(framework.Unschedulable,
			"the scheduler has not read every NodeResourceTopology and pod yet (is the NodeResourceTopology CRD installed, and may the scheduler list it?)")
	}
	cs.Write(stateKey, &cycleState{
		req:  core.Request{CPURequest: r, NUMAStrategy: p.args.NUMAStrategy, Scoring: p.args.ScoringStrategy},
		snap: p.cluster.Snapshot(), placed: map[string]placed{},
	})
	return nil, nil
}

// PreFilterExtensions: none. Preemption's what-ifs (removing victims) are
// not simulated on CPU sets.
func (p *Plugin) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter passes a node whose NodeResourceTopology is there, matches the
// node, and has CPUs for the pod under its policy; the placement is kept
// for Score and Reserve.
func (p *Plugin) Filter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, ok := readState(cs)
	if !ok {
		return framework.AsStatus(errNoState)
	}
	node := ni.Node()
	if node == nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "node not found")
	}
	v := s.snap[node.Name]
	pl, err := core.Place(v, node.Status.Capacity.Cpu().Value(), s.req)
	if err != nil {
		return unfitStatus(ctx, pod, node.Name, err, s.req)
	}
	s.put(node.Name, placed{view: v, p: pl})
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

// Score is the placement's score from Filter.
func (p *Plugin) Score(_ context.Context, cs *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := readState(cs)
	if !ok {
		return 0, framework.AsStatus(errNoState)
	}
	pl, ok := s.get(ni.Node().Name)
	if !ok {
		return 0, nil
	}
	return pl.p.Score, nil
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

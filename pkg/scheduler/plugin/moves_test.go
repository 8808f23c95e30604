package plugin

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	k8stesting "k8s.io/client-go/testing"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// fragmented are the holdings of a node where one thread of every free
// core is held: 7 CPUs are free, no whole core among them. <node>-m0 holds
// NUMA node 0's.
func fragmented(node string) map[string]workload.Assignment {
	return map[string]workload.Assignment{
		"ns/" + node + "-m0": {CPUs: cpuset.New(1, 2, 3), Policy: cpualloc.FullPCPUsThenThreads},
		"ns/" + node + "-m1": {CPUs: cpuset.New(4, 5, 6, 7), Policy: cpualloc.FullPCPUsThenThreads},
	}
}

// movableReport is the report of a fragmented node whose m0 may move, or,
// with movable false, may not.
func movableReport(t *testing.T, node string, movable bool) *nrt.Object {
	t.Helper()
	in := nrt.Input{Node: node, Topology: fixture.MustBuild(machine), Reserved: reserved, Assignments: fragmented(node)}
	if movable {
		in.Movable = map[string]bool{"ns/" + node + "-m0": true}
	}
	o, err := nrt.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A pod of 4 whole cores' CPUs fits a fragmented node only once the agent
// moves m0 off NUMA node 0: Filter passes it, Score puts it below an empty
// node, a node that cannot move refuses it as before, and the pod is bound
// there with no decided CPUs, leaving them to the agent.
func TestFilterScoreBindAfterMoves(t *testing.T) {
	var bound []*v1.Pod
	for _, n := range []string{"moves", "fixed"} {
		for key := range fragmented(n) {
			bound = append(bound, st.MakePod().Namespace("ns").Name(key[len("ns/"):]).UID(key).Node(n).Obj())
		}
	}
	p := pod("p", map[string]string{workload.AnnotationCPUPolicy: string(cpualloc.FullPCPUs)})
	bound = append(bound, p)
	e := newEnv(t, nil, []*nrt.Object{movableReport(t, "moves", true), movableReport(t, "fixed", false), report(t, "empty", nil)}, bound...)
	nodes := []*framework.NodeInfo{node("moves", "16"), node("fixed", "16"), node("empty", "16")}
	cs, filtered := e.cycle(p, nodes...)
	if s := filtered["moves"]; !s.IsSuccess() {
		t.Fatalf("Filter on the node that fits after moves: %v", s)
	}
	if s := filtered["fixed"]; s.Code() != framework.Unschedulable {
		t.Fatalf("Filter on the node that cannot move: %v, want Unschedulable", s)
	}
	if s := filtered["empty"]; !s.IsSuccess() {
		t.Fatalf("Filter on the empty node: %v", s)
	}
	if s := e.pl.PreScore(e.ctx, cs, p, nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	scores := framework.NodeScoreList{}
	for _, n := range []string{"moves", "empty"} {
		sc, s := e.pl.Score(e.ctx, cs, p, node(n, "16"))
		if !s.IsSuccess() {
			t.Fatal(s)
		}
		scores = append(scores, framework.NodeScore{Name: n, Score: sc})
	}
	if s := e.pl.ScoreExtensions().NormalizeScore(e.ctx, cs, p, scores); !s.IsSuccess() {
		t.Fatal(s)
	}
	if scores[0].Score >= scores[1].Score || scores[0].Score < framework.MinNodeScore {
		t.Fatalf("scores %v: want the node that needs moves below the empty one, within range", scores)
	}

	if s := e.pl.Reserve(e.ctx, cs, p, "moves"); !s.IsSuccess() {
		t.Fatalf("Reserve: %v", s)
	}
	if s := e.pl.Bind(e.ctx, cs, p, "moves"); !s.IsSuccess() {
		t.Fatalf("Bind: %v", s)
	}
	var binding *v1.Binding
	for _, act := range e.client.Actions() {
		if c, ok := act.(k8stesting.CreateAction); ok && act.GetSubresource() == "binding" {
			binding = c.GetObject().(*v1.Binding)
		}
	}
	if binding == nil || binding.Target.Name != "moves" {
		t.Fatalf("binding %+v, want one to node moves", binding)
	}
	if len(binding.Annotations) != 0 {
		t.Fatalf("binding annotations %v: want no decision, the agent chooses the CPUs after its moves", binding.Annotations)
	}
}

package plugin

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/workload"
)

// Pods without cpuset-scheduler are none of this plugin's business: every
// extension point lets them through untouched.
func TestOtherPodsUntouched(t *testing.T) {
	e := newEnv(t, nil, nil)
	p := st.MakePod().Namespace("ns").Name("plain").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	cs := framework.NewCycleState()
	if _, s := e.pl.PreFilter(e.ctx, cs, p); s.Code() != framework.Skip {
		t.Fatalf("PreFilter: %v, want Skip", s)
	}
	if s := e.pl.PreScore(e.ctx, cs, p, nil); s.Code() != framework.Skip {
		t.Fatalf("PreScore: %v, want Skip", s)
	}
	if s := e.pl.Reserve(e.ctx, cs, p, "n1"); !s.IsSuccess() {
		t.Fatalf("Reserve: %v", s)
	}
	if s := e.pl.PreBind(e.ctx, cs, p, "n1"); !s.IsSuccess() {
		t.Fatalf("PreBind: %v", s)
	}
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "patch" {
			t.Fatalf("a pod of no concern was patched: %v", a)
		}
	}
}

// A malformed pod is unresolvable, and the reason says what to fix.
func TestMalformedPods(t *testing.T) {
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", nil)})
	noLimit := st.MakePod().Namespace("ns").Name("no-limit").Annotation(workload.AnnotationCPUSet, "true").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	fractional := st.MakePod().Namespace("ns").Name("fractional").Label(workload.AnnotationCPUSet, "true").
		Lim(map[v1.ResourceName]string{v1.ResourceCPU: "1500m"}).Obj()
	for _, tc := range []struct {
		pod  *v1.Pod
		says []string
	}{
		{noLimit, []string{"integer resources.limits.cpu", "spec.containers[0] (con0) has none"}},
		{fractional, []string{"spec.containers[0] (con0) has 1500m"}},
		{pod("bad-policy", map[string]string{workload.AnnotationCPUPolicy: "fastest"}), []string{"annotation cpu-policy", `"fastest"`}},
	} {
		_, s := e.pl.PreFilter(e.ctx, framework.NewCycleState(), tc.pod)
		if s.Code() != framework.UnschedulableAndUnresolvable {
			t.Errorf("%s: %v, want UnschedulableAndUnresolvable", tc.pod.Name, s)
			continue
		}
		for _, w := range tc.says {
			if !strings.Contains(s.Message(), w) {
				t.Errorf("%s: %q does not say %q", tc.pod.Name, s.Message(), w)
			}
		}
	}
}

// Filter refuses nodes without a usable report (unresolvable: preemption
// cannot help; a report whose CPUs are not the node object's is stale)
// and full ones (unschedulable), with node-independent reasons, and
// passes the rest.
func TestFilter(t *testing.T) {
	full := map[string]workload.Assignment{"ns/big": {CPUs: cpuset.New(1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15), Policy: cpualloc.FullPCPUs}}
	e := newEnv(t, nil, []*nrt.Object{report(t, "fits", nil), report(t, "replaced", nil), report(t, "full", full)},
		st.MakePod().Namespace("ns").Name("big").Node("full").Obj())
	nodes := []*framework.NodeInfo{node("fits", "16"), node("none", "16"), node("replaced", "64"), node("full", "16")}
	for _, ni := range nodes {
		if _, err := e.client.CoreV1().Nodes().Create(e.ctx, ni.Node(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the replaced node's capacity", func() bool {
		v := e.pl.Cluster().Snapshot().Get("replaced")
		return v.Err != nil && v.Err.Kind == core.Stale
	})
	_, got := e.cycle(pod("p", nil), nodes...)
	for name, want := range map[string]struct {
		code framework.Code
		says string
	}{
		"fits":     {framework.Success, ""},
		"none":     {framework.UnschedulableAndUnresolvable, "no NodeResourceTopology from the locus agent"},
		"replaced": {framework.UnschedulableAndUnresolvable, "stale NodeResourceTopology"},
		"full":     {framework.Unschedulable, "not enough free CPUs for 4 exclusive CPUs (full-pcpus-then-threads)"},
	} {
		s := got[name]
		if s.Code() != want.code || !strings.Contains(s.Message(), want.says) {
			t.Errorf("%s: %v, want %v saying %q", name, s, want.code, want.says)
		}
	}
}

// A node whose agent stopped rewriting its report's heartbeat takes no
// pods (unresolvable, with the reason) once it is older than nrtMaxAge,
// default 3m; a new heartbeat activates the pods refused for it; 0s turns
// the check off.
func TestFilterSilentAgent(t *testing.T) {
	stamp := func(o *nrt.Object, at time.Time) *nrt.Object {
		o.Metadata.Annotations[nrt.AnnotationHeartbeat] = at.UTC().Format(time.RFC3339)
		return o
	}
	old := time.Now().Add(-10 * time.Minute)
	for _, tc := range []struct {
		args   runtime.Object
		silent bool
	}{{nil, true}, {&runtime.Unknown{Raw: []byte(`{"nrtMaxAge": "20m"}`)}, false}, {&runtime.Unknown{Raw: []byte(`{"nrtMaxAge": "0s"}`)}, false}} {
		e := newEnv(t, tc.args, []*nrt.Object{stamp(report(t, "quiet", nil), old), stamp(report(t, "alive", nil), time.Now())})
		p := pod("p", nil)
		cs, got := e.cycle(p, node("quiet", "16"), node("alive", "16"))
		if !got["alive"].IsSuccess() {
			t.Errorf("%v: alive: %v", tc.args, got["alive"])
		}
		if s := got["quiet"]; s.IsSuccess() == tc.silent {
			t.Errorf("%v: quiet: %v, want silent %v", tc.args, s, tc.silent)
		} else if tc.silent && (s.Code() != framework.UnschedulableAndUnresolvable || !strings.Contains(s.Message(), "whose locus agent stopped reporting")) {
			t.Errorf("quiet: %v", s)
		}
		if !tc.silent {
			continue
		}
		if _, s := e.pl.PostFilter(e.ctx, cs, p, nil); s.Code() != framework.Unschedulable {
			t.Fatalf("PostFilter: %v", s)
		}
		u := toUnstructured(t, stamp(report(t, "quiet", nil), time.Now()))
		if _, err := e.dyn.Resource(nrt.GVR).Update(e.ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the pod refused for the silent node to be activated", func() bool { return e.act.count("ns/p") == 1 })
		if _, got := e.cycle(p, node("quiet", "16")); !got["quiet"].IsSuccess() {
			t.Errorf("after a new heartbeat: %v", got["quiet"])
		}
	}
}

// Score prefers the node where the pod's CPUs share one L3, then packs
// (the default) or spreads (LeastAllocated); NormalizeScore keeps the
// framework's range.
func TestScore(t *testing.T) {
	half := map[string]workload.Assignment{"ns/x": {CPUs: cpuset.New(4, 5, 12, 13), Policy: cpualloc.FullPCPUs}}
	nrts := []*nrt.Object{report(t, "empty", nil), report(t, "busy", half)}
	bound := st.MakePod().Namespace("ns").Name("x").Node("busy").Obj()
	for _, tc := range []struct {
		args runtime.Object
		best string
	}{
		{nil, "busy"},
		{&runtime.Unknown{Raw: []byte(`{"scoringStrategy": "LeastAllocated"}`)}, "empty"},
	} {
		e := newEnv(t, tc.args, nrts, bound)
		p := pod("p", nil)
		cs, _ := e.cycle(p, node("empty", "16"), node("busy", "16"))
		if s := e.pl.PreScore(e.ctx, cs, p, nil); !s.IsSuccess() {
			t.Fatal(s)
		}
		var scores framework.NodeScoreList
		for _, n := range []string{"empty", "busy"} {
			sc, s := e.pl.Score(e.ctx, cs, p, node(n, "16"))
			if !s.IsSuccess() {
				t.Fatal(s)
			}
			scores = append(scores, framework.NodeScore{Name: n, Score: sc})
			// The score Filter kept is the one the node's view gives
			// when Filter did not run.
			unfiltered := framework.NewCycleState()
			if _, s := e.pl.PreFilter(e.ctx, unfiltered, p); !s.IsSuccess() {
				t.Fatal(s)
			}
			if again, s := e.pl.Score(e.ctx, unfiltered, p, node(n, "16")); again != sc || !s.IsSuccess() {
				t.Errorf("%s: score %d after Filter, %d (%v) without", n, sc, again, s)
			}
		}
		if s := e.pl.ScoreExtensions().NormalizeScore(e.ctx, cs, p, scores); !s.IsSuccess() {
			t.Fatal(s)
		}
		best := scores[0]
		for _, sc := range scores {
			if sc.Score < framework.MinNodeScore || sc.Score > framework.MaxNodeScore {
				t.Fatalf("score %v out of range", sc)
			}
			if sc.Score > best.Score {
				best = sc
			}
		}
		if best.Name != tc.best {
			t.Errorf("args %v: scores %v, want %s best", tc.args, scores, tc.best)
		}
	}
}

// Reserve assumes the CPUs, so the next pod in the queue gets others before
// anything is bound; PreBind writes the decision on the pod; Unreserve
// releases it.
func TestReserveAndPreBind(t *testing.T) {
	a, b := pod("a", nil), pod("b", nil)
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", nil)}, a, b)
	csA, _ := e.cycle(a, node("n1", "16"))
	if s := e.pl.Reserve(e.ctx, csA, a, "n1"); !s.IsSuccess() {
		t.Fatal(s)
	}
	csB, _ := e.cycle(b, node("n1", "16"))
	if s := e.pl.Reserve(e.ctx, csB, b, "n1"); !s.IsSuccess() {
		t.Fatal(s)
	}
	for _, tc := range []struct {
		p  *v1.Pod
		cs *framework.CycleState
	}{{a, csA}, {b, csB}} {
		if s := e.pl.PreBind(e.ctx, tc.cs, tc.p, "n1"); !s.IsSuccess() {
			t.Fatal(s)
		}
	}
	decided := map[string]workload.ResourceStatus{}
	for _, name := range []string{"a", "b"} {
		got, err := e.client.CoreV1().Pods("ns").Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := workload.ParseResourceStatus(got.Annotations[workload.AnnotationResourceStatus])
		if err != nil {
			t.Fatalf("pod %s: %v", name, err)
		}
		if rs.CPUs.Size() != 4 || len(rs.NUMANodes) != 1 || rs.Policy != cpualloc.FullPCPUs {
			t.Fatalf("pod %s: decision %+v", name, rs)
		}
		decided[name] = rs
	}
	if !decided["a"].CPUs.Intersection(decided["b"].CPUs).IsEmpty() {
		t.Fatalf("back-to-back pods overlap: %s and %s", decided["a"].CPUs, decided["b"].CPUs)
	}
	patched := 0
	for _, act := range e.client.Actions() {
		if pa, ok := act.(k8stesting.PatchAction); ok && act.GetVerb() == "patch" {
			patched++
			if !strings.Contains(string(pa.GetPatch()), workload.AnnotationResourceStatus) {
				t.Errorf("patch %s", pa.GetPatch())
			}
		}
	}
	if patched != 2 {
		t.Errorf("%d patches, want 2", patched)
	}
	e.pl.Unreserve(e.ctx, csB, b, "n1")
	if ex := e.pl.Cluster().Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.Equals(decided["a"].CPUs) {
		t.Fatalf("after Unreserve of b: exclusive %s, want a's %s", ex, decided["a"].CPUs)
	}
}

// A scheduler that restarts finds the bound pods' decisions through the pod
// informer and counts them before the agent reports them; a deleted pod's
// CPUs are free although the report still lists them.
func TestRestartAndDelete(t *testing.T) {
	bound := pod("bound", map[string]string{workload.AnnotationResourceStatus: `{"cpuset": "4-5,12-13", "numaNodes": [1], "policy": "full-pcpus"}`})
	bound.Spec.NodeName = "n1"
	gone := map[string]workload.Assignment{"ns/gone": {CPUs: cpuset.New(6, 7, 14, 15), Policy: cpualloc.FullPCPUs}}
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", gone)}, bound)
	e.cycle(pod("p", nil), node("n1", "16")) // PreFilter waits for the informers
	if ex := e.pl.Cluster().Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.Equals(cpuset.New(4, 5, 12, 13)) {
		t.Fatalf("exclusive %s, want the bound pod's 4-5,12-13 only", ex)
	}
	if err := e.client.CoreV1().Pods("ns").Delete(e.ctx, "bound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted pod's CPUs to be free", func() bool {
		return e.pl.Cluster().Snapshot().Get("n1").State().Exclusive.IsEmpty()
	})
}

func TestArgs(t *testing.T) {
	for raw, ok := range map[string]bool{
		`{}`: true, `{"scoringStrategy": "LeastAllocated", "numaStrategy": "least-allocated"}`: true,
		`{"scoringStrategy": "Random"}`: false, `{"numaStrategy": "most"}`: false,
		`{"nrtMaxAge": "90s"}`: true, `{"nrtMaxAge": "0s"}`: true, `{"nrtMaxAge": "-1m"}`: false, `{"nrtMaxAge": "soon"}`: false,
	} {
		var a Args
		err := decodeArgs(&runtime.Unknown{Raw: []byte(raw)}, &a)
		if (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
		if ok && (a.ScoringStrategy == "" || a.NUMAStrategy == "" || a.NRTMaxAge == nil) {
			t.Errorf("%s: defaults not filled in: %+v", raw, a)
		}
	}
	if core.MostAllocated != "MostAllocated" {
		t.Fatal("the documented value changed")
	}
}

// A pod no node could take is activated once the plugin's own state has a
// change that frees CPUs (a report with room, a bound pod gone), not before:
// retried earlier it would fail again.
func TestWaitingPodsActivated(t *testing.T) {
	full := map[string]workload.Assignment{"ns/big": {CPUs: cpuset.New(1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15), Policy: cpualloc.FullPCPUs}}
	big := st.MakePod().Namespace("ns").Name("big").Node("n1").Obj()
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", full)}, big)
	p := pod("p", nil)
	cs, got := e.cycle(p, node("n1", "16"))
	if got["n1"].Code() != framework.Unschedulable {
		t.Fatalf("Filter on a full node: %v", got["n1"])
	}
	if _, s := e.pl.PostFilter(e.ctx, cs, p, nil); s.Code() != framework.Unschedulable {
		t.Fatalf("PostFilter: %v", s)
	}
	if n := e.act.count("ns/p"); n != 0 {
		t.Fatalf("activated %d times before anything changed", n)
	}
	if err := e.client.CoreV1().Pods("ns").Delete(e.ctx, "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the waiting pod to be activated", func() bool { return e.act.count("ns/p") == 1 })
	if _, got := e.cycle(p, node("n1", "16")); !got["n1"].IsSuccess() {
		t.Fatalf("after the activation the pod does not fit: %v", got["n1"])
	}
}

// Filter reads each cycle's own state: after another pod's PreFilter, a
// filter on the earlier cycle's state (or on a copy of it, as preemption
// makes) still sees the earlier pod's request.
func TestFilterReadsItsCycleState(t *testing.T) {
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", nil)})
	n1 := node("n1", "16")
	big := pod("big", nil)
	big.Spec.Containers = []v1.Container{st.MakeContainer().Name("big").ResourceRequests(map[v1.ResourceName]string{v1.ResourceCPU: "16"}).
		ResourceLimits(map[v1.ResourceName]string{v1.ResourceCPU: "16"}).Obj()}
	bigCycle, got := e.cycle(big, n1)
	if got["n1"].Code() != framework.Unschedulable {
		t.Fatalf("16 CPUs on a node of 14 free: %v", got["n1"])
	}
	copied := bigCycle.Clone()
	if _, got := e.cycle(pod("small", nil), n1); !got["n1"].IsSuccess() {
		t.Fatalf("4 CPUs: %v", got["n1"])
	}
	for name, cs := range map[string]*framework.CycleState{"its own": bigCycle, "a copy": copied} {
		if s := e.pl.Filter(e.ctx, cs, big, n1); s.Code() != framework.Unschedulable {
			t.Errorf("16 CPUs, on %s state after another cycle: %v", name, s)
		}
	}
}

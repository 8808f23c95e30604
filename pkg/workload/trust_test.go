package workload

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/decisionsig"
	"github.com/locus-project/locus/pkg/topology"
)

// testKeys holds one key, as decisiontest's (which this package's tests
// cannot import).
const testKeys = "test MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"

const testNode = "node-a"

// signed gives the pod a UID when it has none, signs the decision on it for
// testNode as the scheduler would, and returns the agent's trust there.
func signed(t testing.TB, p *corev1.Pod) Trust {
	t.Helper()
	keys, err := decisionsig.ParseKeys([]byte(testKeys))
	if err != nil {
		t.Fatal(err)
	}
	if p.UID == "" {
		p.UID = types.UID("uid-" + p.Name)
	}
	if _, ok := p.Annotations[AnnotationResourceStatus]; ok {
		if err := SignDecision(keys, string(p.UID), testNode, p.Annotations); err != nil {
			t.Fatal(err)
		}
	}
	return Trust{Node: testNode, Keys: keys}
}

// TestPodCPUNeedTrust: a decision is asked for only under the scheduler's
// signature for this pod on this node; any other (none, the signature of
// another pod's or node's, a part changed after signing, no key on the
// agent) is UntrustedResourceStatus, and the pod is then what its own text
// makes it: the agent's to pin when opted in, else shared.
func TestPodCPUNeedTrust(t *testing.T) {
	decided := func(optIn bool) *corev1.Pod {
		ann := map[string]string{AnnotationResourceStatus: `{"cpuset":"2-3"}`}
		if optIn {
			ann[AnnotationCPUSet] = "true"
		}
		return pod(ann, nil, corev1.PodQOSGuaranteed, ctr{name: "a", lim: "cpu=2,memory=1Gi"})
	}
	for _, tc := range []struct {
		name    string
		optIn   bool
		edit    func(p *corev1.Pod, trust *Trust)
		decided string // "" for none
		excl    bool
		problem string
	}{
		{name: "signed", optIn: true, decided: "2-3", excl: true},
		{name: "signed, not opted in (the decision core refuses it)", decided: "2-3", excl: true},
		{name: "unsigned", optIn: true, excl: true, problem: ReasonUntrustedResourceStatus,
			edit: func(p *corev1.Pod, _ *Trust) { delete(p.Annotations, AnnotationDecisionSignature) }},
		{name: "unsigned, not opted in", problem: ReasonUntrustedResourceStatus,
			edit: func(p *corev1.Pod, _ *Trust) { delete(p.Annotations, AnnotationDecisionSignature) }},
		{name: "copied onto another pod", optIn: true, excl: true, problem: ReasonUntrustedResourceStatus,
			edit: func(p *corev1.Pod, _ *Trust) { p.UID = "another" }},
		{name: "on another node", optIn: true, excl: true, problem: ReasonUntrustedResourceStatus,
			edit: func(_ *corev1.Pod, trust *Trust) { trust.Node = "node-b" }},
		{name: "CPUs changed after signing", optIn: true, excl: true, problem: ReasonUntrustedResourceStatus,
			edit: func(p *corev1.Pod, _ *Trust) { p.Annotations[AnnotationResourceStatus] = `{"cpuset":"0-3"}` }},
		{name: "a partition added after signing", optIn: true, excl: true, problem: ReasonUntrustedResourceStatus,
			edit: func(p *corev1.Pod, _ *Trust) { p.Annotations[AnnotationContainerCPUSets] = `{"a":"2-3"}` }},
		{name: "no key on the agent", optIn: true, excl: true, problem: ReasonUntrustedResourceStatus,
			edit: func(_ *corev1.Pod, trust *Trust) { trust.Keys = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := decided(tc.optIn)
			trust := signed(t, p)
			if tc.edit != nil {
				tc.edit(p, &trust)
			}
			var probs []string
			need := PodCPUNeed(p, nil, trust, func(reason, f string, args ...any) {
				probs = append(probs, reason+": "+fmt.Sprintf(f, args...))
			})
			if got := need.Decided.String(); got != tc.decided || need.Exclusive != tc.excl {
				t.Errorf("need %+v, want decided %q, exclusive %v", need, tc.decided, tc.excl)
			}
			if tc.decided != "" && (need.Check == nil || need.Check.OptedIn != tc.optIn || need.Check.LimitCPUs != 2 || need.Check.BestEffort) {
				t.Errorf("check %+v, want opted in %v with 2 CPUs of limits", need.Check, tc.optIn)
			}
			if tc.problem == "" {
				if len(probs) > 0 {
					t.Errorf("problems %q", probs)
				}
				return
			}
			if len(probs) != 1 || !strings.HasPrefix(probs[0], tc.problem) || !strings.Contains(probs[0], AnnotationResourceStatus) ||
				!strings.Contains(probs[0], AnnotationDecisionSignature) {
				t.Errorf("problems %q, want one %s naming the annotations", probs, tc.problem)
			}
		})
	}
}

// capPod is the largest container-scope pod a container-cpusets budget
// serves: a decision of every CPU a machine can have, three init
// containers taking them each in turn, a sidecar and an app container.
var capPod = partsPod{inits: 3, decided: cpuset.New(seq(0, topology.MaxCPUID)...)}

type partsPod struct {
	inits   int
	decided cpuset.CPUSet
}

func (p partsPod) pod() *corev1.Pod {
	var cs []kctr
	for i := range p.inits {
		cs = append(cs, kctr{name: fmt.Sprintf("init%d", i), lim: "1", init: true})
	}
	cs = append(cs, kctr{name: "side", lim: "1", sidecar: true}, kctr{name: "app", lim: "1"})
	return wholePod(map[string]string{AnnotationCPUScope: ScopeContainer}, cs...)
}

func (p partsPod) budget() PartsBudget { return PodPartsBudget(p.pod(), p.decided) }

func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

// TestContainerCPUSetsCap: the annotation that kept 1,174 MiB (64 KiB of
// 4,163 containers each "0-8191") is refused in a millisecond, having made
// no set, and the largest partition the budget lets through keeps at most
// 2 MiB. The cap is maxPartsCPUs: one CPU more is refused.
func TestContainerCPUSetsCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; b.Len() < maxContainerCPUSets-40; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"c%d":"0-8191"`, i)
	}
	b.WriteString("}")
	hostile := b.String()
	// A pod with as many containers as the annotation names: only the
	// budget stops it.
	many := wholePod(map[string]string{AnnotationCPUScope: ScopeContainer})
	for i := range strings.Count(hostile, ":") {
		many.Spec.Containers = append(many.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i),
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}})
	}
	var err error
	fuzzseed.CheckKept(t, fmt.Sprintf("%d bytes naming %d containers", len(hostile), len(many.Spec.Containers)), 1<<20, time.Second, func() any {
		var parts map[string]cpuset.CPUSet
		parts, err = ParseContainerCPUSets(hostile, PodPartsBudget(many, capPod.decided))
		return parts
	})
	if err == nil || !strings.Contains(err.Error(), "more than the 0 left of the budget") {
		t.Fatalf("the hostile annotation: %v, want it over the budget", err)
	}

	all := capPod.decided.String()
	atCap := map[string]string{"init0": all, "init1": all, "init2": all, "side": "0-4095", "app": "4096-8191"}
	if b := capPod.budget(); b.total != maxPartsCPUs {
		t.Fatalf("the cap pod's budget is %d, want the cap %d", b.total, maxPartsCPUs)
	}
	var parts map[string]cpuset.CPUSet
	fuzzseed.CheckKept(t, fmt.Sprintf("a partition of %d CPUs in all", maxPartsCPUs), 2<<20, 2*time.Second, func() any {
		parts, err = ParseContainerCPUSets(FormatContainerCPUSets(mustSets(t, atCap)), capPod.budget())
		return parts
	})
	if err != nil || len(parts) != 5 {
		t.Fatalf("at the cap: %d parts, %v", len(parts), err)
	}
	atCap["side"] = "0-4096"
	if _, err := ParseContainerCPUSets(FormatContainerCPUSets(mustSets(t, atCap)), capPod.budget()); err == nil ||
		!strings.Contains(err.Error(), "more than the 4096 left") {
		t.Fatalf("one CPU over the cap: %v", err)
	}
}

func mustSets(t *testing.T, lists map[string]string) map[string]cpuset.CPUSet {
	t.Helper()
	out := map[string]cpuset.CPUSet{}
	for n, l := range lists {
		s, err := topology.ParseCPUList(l)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = s
	}
	return out
}

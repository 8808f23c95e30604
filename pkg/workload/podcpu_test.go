package workload

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

func TestOptedIn(t *testing.T) {
	for _, tc := range []struct {
		ann, labels map[string]string
		want        bool
	}{
		{map[string]string{AnnotationCPUSet: "true"}, nil, true},
		{map[string]string{AnnotationCPUSet: " True "}, nil, true},
		{nil, map[string]string{AnnotationCPUSet: "true"}, true},
		{map[string]string{AnnotationCPUSet: "false"}, nil, false},
		{map[string]string{"cpu-policy": "static-burst"}, nil, false},
		{nil, nil, false},
	} {
		if got := OptedIn(pod(tc.ann, tc.labels, "")); got != tc.want {
			t.Errorf("OptedIn(annotations %v, labels %v) = %v, want %v", tc.ann, tc.labels, got, tc.want)
		}
	}
}

func TestAsksForCPUs(t *testing.T) {
	for _, tc := range []struct {
		ann, labels map[string]string
		want        bool
	}{
		{map[string]string{AnnotationCPUSet: "true"}, nil, true},
		{nil, map[string]string{AnnotationCPUSet: "TRUE"}, true},
		{map[string]string{AnnotationResourceStatus: `{"cpuset":"2-3"}`, AnnotationDecisionSignature: "v1:k:x"}, nil, true},
		{map[string]string{AnnotationResourceStatus: "not json", AnnotationDecisionSignature: ""}, nil, true},
		{map[string]string{AnnotationResourceStatus: `{"cpuset":"2-3"}`}, nil, false},
		{map[string]string{AnnotationCPUSet: "no"}, nil, false},
		{nil, nil, false},
	} {
		if got := AsksForCPUs(tc.labels, tc.ann); got != tc.want {
			t.Errorf("AsksForCPUs(labels %v, annotations %v) = %v, want %v", tc.labels, tc.ann, got, tc.want)
		}
	}
}

// ParseCPURequest reads what the agent reads, but refuses what the agent
// would run in the shared pool or with the default policy, naming the fix.
func TestParseCPURequest(t *testing.T) {
	opt := func(policy string) map[string]string {
		m := map[string]string{AnnotationCPUSet: "true"}
		if policy != "" {
			m[AnnotationCPUPolicy] = policy
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		cs      []ctr
		want    CPURequest
		wantErr []string
	}{
		{"default policy", opt(""), []ctr{{name: "a", req: "cpu=1", lim: "cpu=4"}},
			CPURequest{CPUs: 4, Policy: cpualloc.FullPCPUsThenThreads}, nil},
		{"static-burst counts requests", opt("static-burst"),
			[]ctr{{name: "a", req: "cpu=1", lim: "cpu=4"}, {name: "b", req: "cpu=500m", lim: "cpu=2"}},
			CPURequest{CPUs: 6, Policy: cpualloc.StaticBurst, RequestMilli: 1500}, nil},
		{"policy in any case", opt(" Full-PCPUs"), []ctr{{name: "a", lim: "cpu=2"}},
			CPURequest{CPUs: 2, Policy: cpualloc.FullPCPUs}, nil},
		{"no limit", opt(""), []ctr{{name: "a", req: "cpu=1"}}, CPURequest{},
			[]string{"integer resources.limits.cpu", "spec.containers[0] (a) has none"}},
		{"fractional limit", opt(""), []ctr{{name: "a", lim: "cpu=1"}, {name: "b", lim: "cpu=1500m"}}, CPURequest{},
			[]string{"spec.containers[1] (b) has 1500m"}},
		{"unknown policy", opt("turbo"), []ctr{{name: "a", lim: "cpu=2"}}, CPURequest{},
			[]string{"annotation cpu-policy", `"turbo" is not one of`}},
		{"container scope lists the containers", withScope(opt(""), "Container"),
			[]ctr{{name: "a", lim: "cpu=2"}, {name: "b", lim: "cpu=1"}},
			CPURequest{CPUs: 3, Policy: cpualloc.FullPCPUsThenThreads, Containers: []cpualloc.ContainerCPUs{
				{Name: "a", Kind: cpualloc.App, CPUs: 2}, {Name: "b", Kind: cpualloc.App, CPUs: 1}}}, nil},
		{"pod scope lists none", withScope(opt(""), "pod"), []ctr{{name: "a", lim: "cpu=2"}},
			CPURequest{CPUs: 2, Policy: cpualloc.FullPCPUsThenThreads}, nil},
		{"unknown scope", withScope(opt(""), "thread"), []ctr{{name: "a", lim: "cpu=2"}}, CPURequest{},
			[]string{"annotation locus.io/cpu-scope", `"thread" is not one of pod, container`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCPURequest(pod(tc.ann, nil, "", tc.cs...))
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, got %+v", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func withScope(m map[string]string, scope string) map[string]string {
	m[AnnotationCPUScope] = scope
	return m
}

// ScheduledCPUs is the decision as the agent applies it: a static-burst pod's
// CPUs carry its request; a decision without a policy takes the pod's.
func TestDecision(t *testing.T) {
	ann := func(status, policy string) map[string]string {
		m := map[string]string{AnnotationResourceStatus: status}
		if policy != "" {
			m[AnnotationCPUPolicy] = policy
		}
		return m
	}
	c := ctr{name: "a", req: "cpu=1", lim: "cpu=4"}
	a, ok, err := ScheduledCPUs(pod(ann(`{"cpuset": "4-7", "policy": "static-burst"}`, ""), nil, "", c))
	if err != nil || !ok || !a.CPUs.Equals(cpuset.New(4, 5, 6, 7)) || a.Policy != cpualloc.StaticBurst || a.RequestMilli != 1000 {
		t.Errorf("static-burst decision: %+v %v %v", a, ok, err)
	}
	a, ok, err = ScheduledCPUs(pod(ann(`{"cpuset": "2-3"}`, "static-burst"), nil, "", c))
	if err != nil || !ok || a.Policy != cpualloc.StaticBurst || a.RequestMilli != 1000 {
		t.Errorf("decision without a policy takes the pod's: %+v %v %v", a, ok, err)
	}
	a, ok, err = ScheduledCPUs(pod(ann(`{"cpuset": "2-3", "policy": "full-pcpus"}`, ""), nil, "", c))
	if err != nil || !ok || a.Policy != cpualloc.FullPCPUs || a.RequestMilli != 0 {
		t.Errorf("exclusive decision: %+v %v %v", a, ok, err)
	}
	if _, ok, err := ScheduledCPUs(pod(nil, nil, "", c)); ok || err != nil {
		t.Errorf("no decision: %v %v", ok, err)
	}
	if _, ok, err := ScheduledCPUs(pod(ann(`{"cpuset": 5}`, ""), nil, "", c)); ok || err == nil {
		t.Errorf("malformed decision: %v %v", ok, err)
	}
}

// Format writes what ParseResourceStatus reads.
func TestResourceStatusRoundTrip(t *testing.T) {
	in := ResourceStatus{CPUs: cpuset.New(0, 1, 2, 3, 8), NUMANodes: []int{0}, Policy: cpualloc.FullPCPUs}
	raw := in.Format()
	if raw != `{"cpuset":"0-3,8","numaNodes":[0],"policy":"full-pcpus"}` {
		t.Errorf("Format = %s", raw)
	}
	out, err := ParseResourceStatus(raw)
	if err != nil || !out.CPUs.Equals(in.CPUs) || out.Policy != in.Policy || len(out.NUMANodes) != 1 {
		t.Errorf("round trip: %+v %v", out, err)
	}
}

// A bad cpu-policy is told with the value actually used in its place.
func TestInvalidCPUPolicyNamesThePolicyUsed(t *testing.T) {
	var msgs []string
	p := policyOf(pod(map[string]string{AnnotationCPUSet: "true", AnnotationCPUPolicy: "fast"}, nil, ""),
		func(reason, format string, args ...any) {
			msgs = append(msgs, reason+": "+fmt.Sprintf(format, args...))
		})
	want := `InvalidCPUPolicy: annotation cpu-policy: "fast" is not one of static-burst, full-pcpus-then-threads, full-pcpus, spread-by-pcpus, distribute-across-numa; using full-pcpus-then-threads instead, the default`
	if p != DefaultPolicy || len(msgs) != 1 || msgs[0] != want {
		t.Errorf("policy %s, problems %q; want %s and %q", p, msgs, DefaultPolicy, want)
	}
}

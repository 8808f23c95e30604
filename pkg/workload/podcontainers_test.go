package workload

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// kctr is a container of wholePod: an init container (init), a sidecar
// (init with restartPolicy Always) or an app container, with its CPU limit
// ("" for none).
type kctr struct {
	name, lim     string
	init, sidecar bool
}

func wholePod(ann map[string]string, cs ...kctr) *corev1.Pod {
	p := pod(ann, nil, "")
	always := corev1.ContainerRestartPolicyAlways
	for _, c := range cs {
		k := corev1.Container{Name: c.name}
		if c.lim != "" {
			k.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(c.lim)}
		}
		if c.sidecar {
			k.RestartPolicy = &always
		}
		if c.init || c.sidecar {
			p.Spec.InitContainers = append(p.Spec.InitContainers, k)
		} else {
			p.Spec.Containers = append(p.Spec.Containers, k)
		}
	}
	return p
}

// The pod's count is Kubernetes' effective pod limit: the larger of the app
// containers with the sidecars, and of each init container with the
// sidecars declared before it.
func TestPodLimitCPUs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cs      []kctr
		want    int
		wantErr string
	}{
		{"app containers add up", []kctr{{name: "a", lim: "2"}, {name: "b", lim: "3"}}, 5, ""},
		{"a small init container counts nothing more",
			[]kctr{{name: "i", lim: "1", init: true}, {name: "a", lim: "2"}}, 2, ""},
		{"a large init container sets the count",
			[]kctr{{name: "i", lim: "6", init: true}, {name: "a", lim: "2"}, {name: "b", lim: "2"}}, 6, ""},
		{"sidecars add to the app containers",
			[]kctr{{name: "s", lim: "1", sidecar: true}, {name: "a", lim: "2"}}, 3, ""},
		{"an init container after a sidecar runs beside it",
			[]kctr{{name: "s", lim: "2", sidecar: true}, {name: "i", lim: "4", init: true}, {name: "a", lim: "1"}}, 6, ""},
		{"an init container before a sidecar runs alone",
			[]kctr{{name: "i", lim: "4", init: true}, {name: "s", lim: "2", sidecar: true}, {name: "a", lim: "1"}}, 4, ""},
		{"the largest init term wins",
			[]kctr{{name: "i1", lim: "3", init: true}, {name: "s", lim: "2", sidecar: true}, {name: "i2", lim: "2", init: true},
				{name: "a", lim: "1"}}, 4, ""},
		{"an init container without a limit counts nothing", []kctr{{name: "i", init: true}, {name: "a", lim: "2"}}, 2, ""},
		{"a sidecar without a limit counts nothing", []kctr{{name: "s", sidecar: true}, {name: "a", lim: "2"}}, 2, ""},
		{"an app container without a limit", []kctr{{name: "i", lim: "1", init: true}, {name: "a"}}, 0,
			"spec.containers[0] (a) has none"},
		{"a fractional sidecar", []kctr{{name: "s", lim: "500m", sidecar: true}, {name: "a", lim: "2"}}, 0,
			"spec.initContainers[0] (s) has 500m"},
		{"a fractional app container after init containers",
			[]kctr{{name: "i", lim: "1", init: true}, {name: "a", lim: "2"}, {name: "b", lim: "1500m"}}, 0,
			"spec.containers[1] (b) has 1500m"},
		{"nothing at all", []kctr{{name: "i", lim: "0", init: true}, {name: "a", lim: "0"}}, 0,
			"the pod's limits add up to 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := map[string]string{AnnotationCPUSet: "true"}
			p := wholePod(opt, tc.cs...)
			req, err := ParseCPURequest(p)
			var probs []string
			need := PodCPUNeed(p, nil, Trust{}, func(reason, f string, args ...any) { probs = append(probs, reason+": "+fmt.Sprintf(f, args...)) })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("scheduler: %+v, %v; want an error saying %q", req, err, tc.wantErr)
				}
				if need.Exclusive || len(probs) != 1 || !strings.Contains(probs[0], tc.wantErr) {
					t.Errorf("agent: %+v, problems %q; want the shared pool and a problem saying %q", need, probs, tc.wantErr)
				}
				return
			}
			if err != nil || req.CPUs != tc.want {
				t.Errorf("scheduler: %+v, %v; want %d CPUs", req, err, tc.want)
			}
			if !need.Exclusive || need.CPUs != tc.want || len(probs) != 0 {
				t.Errorf("agent: %+v, problems %q; want %d CPUs", need, probs, tc.want)
			}
		})
	}
}

// A sidecar resized in place counts the limit its status reports, an init
// container (never resized) its spec's.
func TestPodLimitCPUsActuatedSidecar(t *testing.T) {
	p := wholePod(map[string]string{AnnotationCPUSet: "true"},
		kctr{name: "s", lim: "1", sidecar: true}, kctr{name: "a", lim: "2"})
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "s", Resources: &corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}
	if n, err := actuatedLimitCPUs(p); err != nil || n != 5 {
		t.Errorf("actuated: %d, %v; want 5", n, err)
	}
	if req, err := ParseCPURequest(p); err != nil || req.CPUs != 3 {
		t.Errorf("spec: %+v, %v; want 3", req, err)
	}
}

// A container-scope pod lists its containers in spec order, init
// containers first, each with its kind; a bad scope is told and the pod
// scope used; the scheduler's partition is read beside the decision.
func TestContainerScopeNeed(t *testing.T) {
	cs := []kctr{{name: "fetch", lim: "4", init: true}, {name: "log", lim: "1", sidecar: true},
		{name: "app", lim: "2"}}
	want := []cpualloc.ContainerCPUs{{Name: "fetch", Kind: cpualloc.Init, CPUs: 4},
		{Name: "log", Kind: cpualloc.Sidecar, CPUs: 1}, {Name: "app", Kind: cpualloc.App, CPUs: 2}}
	for _, tc := range []struct {
		name      string
		ann       map[string]string
		want      []cpualloc.ContainerCPUs
		decided   map[string]cpuset.CPUSet
		wantProbs []string
	}{
		{"pod scope by default", map[string]string{}, nil, nil, nil},
		{"container scope", map[string]string{AnnotationCPUScope: " container"}, want, nil, nil},
		{"a bad scope", map[string]string{AnnotationCPUScope: "threads"}, nil, nil,
			[]string{`InvalidCPUScope: annotation locus.io/cpu-scope: "threads" is not one of pod, container; using pod instead, the default: the containers share the pod's CPUs`}},
		{"the scheduler's partition", map[string]string{AnnotationCPUScope: "container",
			AnnotationResourceStatus: `{"cpuset":"0-3"}`, AnnotationContainerCPUSets: `{"fetch":"0-3","log":"0","app":"1-2"}`},
			want, map[string]cpuset.CPUSet{"fetch": cpuset.New(0, 1, 2, 3), "log": cpuset.New(0), "app": cpuset.New(1, 2)}, nil},
		{"a bad partition", map[string]string{AnnotationCPUScope: "container",
			AnnotationResourceStatus: `{"cpuset":"0-3"}`, AnnotationContainerCPUSets: `{"app":"x"}`}, want, nil,
			[]string{`InvalidContainerCPUSets: annotation locus.io/container-cpusets: container "app": `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.ann[AnnotationCPUSet] = "true"
			var probs []string
			p := wholePod(tc.ann, cs...)
			trust := signed(t, p)
			need := PodCPUNeed(p, nil, trust, func(reason, f string, args ...any) {
				probs = append(probs, reason+": "+fmt.Sprintf(f, args...))
			})
			if need.CPUs != 4 || !reflect.DeepEqual(need.Containers, tc.want) {
				t.Errorf("need %+v, want containers %+v", need, tc.want)
			}
			if !SameContainerCPUSets(need.DecidedContainers, tc.decided) {
				t.Errorf("decided %v, want %v", need.DecidedContainers, tc.decided)
			}
			if len(probs) != len(tc.wantProbs) {
				t.Fatalf("problems %q, want %q", probs, tc.wantProbs)
			}
			for i := range probs {
				if !strings.HasPrefix(probs[i], tc.wantProbs[i]) {
					t.Errorf("problem %q, want %q", probs[i], tc.wantProbs[i])
				}
			}
		})
	}
}

func TestContainerCPUSetsRoundTrip(t *testing.T) {
	in := map[string]cpuset.CPUSet{"web": cpuset.New(0, 1), "log": cpuset.New(2), `q"t`: cpuset.New(3, 5)}
	raw := FormatContainerCPUSets(in)
	if raw != `{"log":"2","q\"t":"3,5","web":"0-1"}` {
		t.Errorf("Format = %s", raw)
	}
	b := PartsBudget{Containers: map[string]bool{"web": true, "log": true, `q"t`: true, "a": true, "b": true},
		Decided: cpuset.New(0, 1, 2, 3, 5)}
	b.total = 10
	out, err := ParseContainerCPUSets(raw, b)
	if err != nil || !SameContainerCPUSets(in, out) {
		t.Errorf("round trip: %v, %v", out, err)
	}
	for raw, want := range map[string]string{
		`["0"]`:                       "not a JSON object",
		`{"a":"0"} {}`:                "text after the JSON object",
		`{"a":""}`:                    `container "a": empty CPU list`,
		`{"a":"9999999"}`:             `container "a": `,
		strings.Repeat(" ", 64<<10+1): "65537 bytes, more than the 65536",
		`{"a":"0","b":"1-"}`:          `container "b": `,
		`{"a":"0","zz":"1"}`:          `container "zz": the pod has no container of that name`,
		`{"a":"0-3,5","b":"0-3,5","web":"0-3,5"}`: `container "web": 5 CPUs: more than the 0 left`,
		`{"a":"4"}`:   `container "a": CPUs 4 are not the decision's 0-3,5`,
		`{"a":"0-7"}`: `container "a": 8 CPUs, more than the decision's 5`,
		`{"a":"0","b":"0","c":"0","d":"0","e":"0","f":"0"}`: "6 containers, but the pod has 5",
	} {
		if _, err := ParseContainerCPUSets(raw, b); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseContainerCPUSets(%.40q) = %v, want an error saying %q", raw, err, want)
		}
	}
}

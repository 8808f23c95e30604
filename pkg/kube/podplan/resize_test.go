package podplan

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/workload"
)

// A pod resized in place (InPlacePodVerticalScaling) keeps its desired CPU
// limits in spec and those the kubelet actuated in
// status.containerStatuses[].resources: the CPUs follow the actuated ones.
// A container whose status reports none counts its spec's. A decided pod is
// resized from its decision only once every container reports its limit.
func TestFromPodCPUNeedResized(t *testing.T) {
	actuated := func(p *corev1.Pod, lims ...string) *corev1.Pod {
		for i, l := range lims {
			if l != "" {
				p.Status.ContainerStatuses[i].Resources = &corev1.ResourceRequirements{Limits: res(l)}
			}
		}
		return p
	}
	opt := map[string]string{workload.AnnotationCPUSet: "true"}
	decided := func(policy string) map[string]string {
		return map[string]string{workload.AnnotationCPUSet: "true", workload.AnnotationCPUPolicy: policy,
			workload.AnnotationResourceStatus: `{"cpuset":"2-3"}`}
	}
	four := []ctr{{name: "a", req: "cpu=2", lim: "cpu=2"}, {name: "b", req: "cpu=2", lim: "cpu=2"}}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		cpus     int
		decided  string
		problems string
		message  string
	}{
		{name: "spec only", pod: pod(opt, nil, corev1.PodQOSGuaranteed, four...), cpus: 4},
		{name: "actuated grow of one container", pod: actuated(pod(opt, nil, corev1.PodQOSGuaranteed, four...), "cpu=3"), cpus: 5},
		{name: "actuated shrink of both", pod: actuated(pod(opt, nil, corev1.PodQOSGuaranteed, four...), "cpu=1", "cpu=1"), cpus: 2},
		{name: "actuated fraction", pod: actuated(pod(opt, nil, corev1.PodQOSGuaranteed, four...), "cpu=1500m"),
			problems: "InvalidCPULimit", message: "status.containerStatuses[0] (a) has 1500m"},
		{name: "decided, not resized", pod: actuated(pod(decided(""), nil, corev1.PodQOSGuaranteed, four...), "cpu=1", "cpu=1"), cpus: 2, decided: "2-3"},
		{name: "decided, resized", pod: actuated(pod(decided(""), nil, corev1.PodQOSGuaranteed, four...), "cpu=2", "cpu=2"), cpus: 4, decided: "2-3"},
		{name: "decided, one container reporting", pod: actuated(pod(decided(""), nil, corev1.PodQOSGuaranteed, four...), "cpu=3"), cpus: 2, decided: "2-3"},
		{name: "decided static-burst", pod: actuated(pod(decided("static-burst"), nil, corev1.PodQOSGuaranteed, four...), "cpu=2", "cpu=2"), cpus: 2, decided: "2-3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := FromPod(signed(t, tt.pod), env(podB, "kubepods/pod"+uid))
			if err != nil {
				t.Fatal(err)
			}
			n := w.Plan.CPU
			if n.CPUs != tt.cpus || n.Decided.String() != tt.decided || reasons(w) != tt.problems {
				t.Fatalf("need %+v decided %q problems %v", n, n.Decided.String(), w.Problems)
			}
			if tt.message != "" && !strings.Contains(w.Problems[0].Message, tt.message) {
				t.Fatalf("message %q does not name %q", w.Problems[0].Message, tt.message)
			}
			if tt.cpus > 0 && n.Policy == "" {
				t.Fatalf("no policy: %+v", n)
			}
		})
	}
}

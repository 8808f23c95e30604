package workload

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// res builds requests/limits from "cpu=2,memory=1Gi".
func res(spec string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(spec, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[corev1.ResourceName(k)] = resource.MustParse(v)
		}
	}
	return out
}

type ctr struct{ name, req, lim string }

func pod(ann, labels map[string]string, qos corev1.PodQOSClass, cs ...ctr) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", Annotations: ann, Labels: labels},
		Status:     corev1.PodStatus{QOSClass: qos, Phase: corev1.PodRunning},
	}
	for _, c := range cs {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.name,
			Resources: corev1.ResourceRequirements{Requests: res(c.req), Limits: res(c.lim)}})
	}
	return p
}

func TestKubeQoSDerived(t *testing.T) {
	tests := []struct {
		cs   []ctr
		want corev1.PodQOSClass
	}{
		{[]ctr{{name: "a"}}, corev1.PodQOSBestEffort},
		{[]ctr{{name: "a", lim: "cpu=1,memory=1Gi"}}, corev1.PodQOSGuaranteed},
		{[]ctr{{name: "a", req: "cpu=1,memory=1Gi", lim: "cpu=1,memory=1Gi"}, {name: "b", lim: "cpu=2,memory=2Gi"}}, corev1.PodQOSGuaranteed},
		{[]ctr{{name: "a", req: "cpu=1", lim: "cpu=2,memory=1Gi"}}, corev1.PodQOSBurstable},
		{[]ctr{{name: "a", lim: "cpu=1,memory=1Gi"}, {name: "b"}}, corev1.PodQOSBurstable},
	}
	for i, tt := range tests {
		if got := KubeQoS(pod(nil, nil, "", tt.cs...)); got != tt.want {
			t.Errorf("case %d: = %s, want %s", i, got, tt.want)
		}
	}
}

func TestParseResourceStatus(t *testing.T) {
	tests := []struct {
		in, wantErr string
		cpus        string
	}{
		{in: `{"cpuset":"0-3","numaNodes":[0],"policy":"full-pcpus"}`, cpus: "0-3"},
		{in: `{"cpuset":"1,3","future":{"x":1}}`, cpus: "1,3"},
		{in: `{"cpuset":""}`, wantErr: "cpuset: missing"},
		{in: `{"numaNodes":[0]}`, wantErr: "cpuset: missing"},
		{in: `{"cpuset":"0-"}`, wantErr: `cpuset: invalid cpu list "0-"`},
		// Hostile ranges: before the bound, the first never returned and
		// the second cost 30 s and 1.15 GiB, in the scheduler and the agent.
		{in: `{"cpuset":"0-9223372036854775807"}`, wantErr: "cpuset: invalid cpu list"},
		{in: `{"cpuset":"0-16000000"}`, wantErr: "above the largest cpu id 8191"},
		{in: `{"cpuset":"0","numaNodes":[4096]}`, wantErr: "numaNodes[0]: 4096 is not a node id"},
		{in: `{"cpuset":"0","numaNodes":[-1]}`, wantErr: "numaNodes[0]"},
		{in: `{"cpuset":"0","policy":"fast"}`, wantErr: "policy:"},
		{in: `{"cpuset":0}`, wantErr: "not a JSON object"},
		{in: `{"cpuset":"0"} x`, wantErr: "text after"},
		{in: ``, wantErr: "not a JSON object"},
	}
	for _, tt := range tests {
		got, err := ParseResourceStatus(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.CPUs.String() != tt.cpus {
			t.Errorf("%s: = %v, %v", tt.in, got.CPUs, err)
		}
	}
	rs := ResourceStatus{CPUs: cpuset.New(0, 1, 2), NUMANodes: []int{0}, Policy: cpualloc.FullPCPUs}
	back, err := ParseResourceStatus(rs.Format())
	if err != nil || !back.CPUs.Equals(rs.CPUs) || back.Policy != rs.Policy || len(back.NUMANodes) != 1 {
		t.Fatalf("round trip of %s = %+v, %v", rs.Format(), back, err)
	}
}

package podmem

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/internal/fuzzseed"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

func container(name string, req, lim map[corev1.ResourceName]string) corev1.Container {
	c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	for k, v := range req {
		c.Resources.Requests[k] = resource.MustParse(v)
	}
	for k, v := range lim {
		c.Resources.Limits[k] = resource.MustParse(v)
	}
	return c
}

type rl = map[corev1.ResourceName]string

func TestNeed(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := container("side", rl{"memory": "1Gi"}, nil)
	sidecar.RestartPolicy = &always
	for name, tc := range map[string]struct {
		inits, apps []corev1.Container
		want        cpualloc.Memory
		err         string
	}{
		"none":             {apps: []corev1.Container{container("a", rl{"cpu": "2"}, nil)}},
		"requests summed":  {apps: []corev1.Container{container("a", rl{"memory": "1Gi"}, nil), container("b", rl{"memory": "512Mi"}, nil)}, want: cpualloc.Memory{Bytes: 3 << 29}},
		"limit when alone": {apps: []corev1.Container{container("a", nil, rl{"memory": "2Gi"})}, want: cpualloc.Memory{Bytes: 2 << 30}},
		"request over limit": {apps: []corev1.Container{container("a", rl{"memory": "1Gi"}, rl{"memory": "4Gi"})},
			want: cpualloc.Memory{Bytes: 1 << 30}},
		"huge pages": {apps: []corev1.Container{container("a", rl{"hugepages-2Mi": "8Mi", "hugepages-1Gi": "2Gi"}, rl{"hugepages-2Mi": "8Mi", "hugepages-1Gi": "2Gi"})},
			want: cpualloc.Memory{HugePages2Mi: 8 << 20, HugePages1Gi: 2 << 30}},
		"init larger": {inits: []corev1.Container{container("i", rl{"memory": "8Gi"}, nil)}, apps: []corev1.Container{container("a", rl{"memory": "1Gi"}, nil)},
			want: cpualloc.Memory{Bytes: 8 << 30}},
		"sidecar adds": {inits: []corev1.Container{sidecar}, apps: []corev1.Container{container("a", rl{"memory": "1Gi"}, nil)},
			want: cpualloc.Memory{Bytes: 2 << 30}},
		"negative":      {apps: []corev1.Container{container("a", rl{"memory": "-1Gi"}, nil)}, err: "spec.containers[0] (a): resources.requests.memory: -1Gi is negative"},
		"absurd":        {apps: []corev1.Container{container("a", rl{"memory": "2Pi"}, nil)}, err: "resources.requests.memory: 2Pi is more than 1125899906842624 bytes"},
		"absurd in all": {apps: []corev1.Container{container("a", rl{"memory": "1Pi"}, nil), container("b", rl{"memory": "1Pi"}, nil)}, err: "2251799813685248 bytes of memory in all"},
		"part page":     {apps: []corev1.Container{container("a", rl{"hugepages-2Mi": "3Mi"}, nil)}, err: "resources.requests.hugepages-2Mi: 3Mi is not a whole number of 2097152-byte pages"},
		"unknown size":  {inits: []corev1.Container{container("i", nil, rl{"hugepages-16Mi": "16Mi"})}, err: "spec.initContainers[0] (i): resources hugepages-16Mi: only hugepages-2Mi and hugepages-1Gi"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Need(&corev1.Pod{Spec: corev1.PodSpec{InitContainers: tc.inits, Containers: tc.apps}})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Need = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// FuzzNeed: a pod's quantities are its author's: whatever they say, Need
// answers at once, within its bound, or names the resource it refuses.
func FuzzNeed(f *testing.F) {
	for _, s := range []string{"1Gi", "2Mi", "-1", "1e18", "0.5", "9Ei", "1073741824", "3Mi"} {
		f.Add(s)
	}
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, qty string) {
		q, err := resource.ParseQuantity(qty)
		if err != nil {
			return // the API server would not have stored it
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceMemory, HugePages2Mi, HugePages1Gi} {
			need(t, name, q)
		}
	})
}

func need(t *testing.T, name corev1.ResourceName, q resource.Quantity) {
	c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{name: q}}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c, c}}}
	var m cpualloc.Memory
	var err error
	fuzzseed.Timed(t, "Need", func() { m, err = Need(pod) })
	if err != nil {
		if !strings.Contains(err.Error(), "spec.containers[") && !strings.Contains(err.Error(), "in all") {
			t.Fatalf("error names no container: %v", err)
		}
		return
	}
	if m.Bytes > MaxBytes || m.HugePages2Mi > MaxBytes || m.HugePages1Gi > MaxBytes || m.HugePages2Mi%(2<<20) != 0 || m.HugePages1Gi%(1<<30) != 0 {
		t.Fatalf("Need = %+v from %s %s", m, name, q.String())
	}
}

// Reading a pod is on every scheduling cycle of an opted-in pod: it
// allocates nothing, with memory or without.
func TestNeedAllocatesNothing(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		container("a", rl{"cpu": "2"}, rl{"cpu": "2"}),
		container("b", rl{"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"}, rl{"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"}),
	}}}
	if n := testing.AllocsPerRun(100, func() { _, _ = Need(pod) }); n != 0 {
		t.Fatalf("Need made %.0f allocations", n)
	}
}

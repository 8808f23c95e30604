package workload

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/internal/fuzzseed"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
)

const gi, mi = 1 << 30, 1 << 20

func memPod(init []corev1.Container, apps ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{InitContainers: init, Containers: apps}}
}

// memContainerOf is a container whose requests and limits are "name=qty"
// pairs, requests before the "|", limits after.
func memContainerOf(name, spec string) corev1.Container {
	c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	req, lim, _ := strings.Cut(spec, "|")
	for _, part := range []struct {
		text string
		rl   corev1.ResourceList
	}{{req, c.Resources.Requests}, {lim, c.Resources.Limits}} {
		for _, kv := range strings.Fields(part.text) {
			k, v, _ := strings.Cut(kv, "=")
			part.rl[corev1.ResourceName(k)] = resource.MustParse(v)
		}
	}
	return c
}

func TestPodMemory(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := func(c corev1.Container) corev1.Container { c.RestartPolicy = &always; return c }
	tests := []struct {
		name string
		pod  *corev1.Pod
		want cpualloc.Memory
		err  string
	}{
		{name: "none", pod: memPod(nil, memContainerOf("app", ""))},
		{name: "request", pod: memPod(nil, memContainerOf("app", "memory=2Gi|memory=4Gi")), want: cpualloc.Memory{Bytes: 2 * gi}},
		{name: "limit when no request", pod: memPod(nil, memContainerOf("app", "|memory=4Gi")), want: cpualloc.Memory{Bytes: 4 * gi}},
		{name: "huge pages", pod: memPod(nil, memContainerOf("app", "hugepages-2Mi=64Mi hugepages-1Gi=2Gi|hugepages-2Mi=64Mi hugepages-1Gi=2Gi")),
			want: cpualloc.Memory{HugePages2Mi: 64 * mi, HugePages1Gi: 2 * gi}},
		{name: "containers add up", pod: memPod(nil, memContainerOf("a", "memory=1Gi"), memContainerOf("b", "memory=1Gi hugepages-2Mi=4Mi")),
			want: cpualloc.Memory{Bytes: 2 * gi, HugePages2Mi: 4 * mi}},
		{name: "init container larger than the apps", pod: memPod([]corev1.Container{memContainerOf("init", "memory=8Gi")}, memContainerOf("a", "memory=1Gi")),
			want: cpualloc.Memory{Bytes: 8 * gi}},
		{name: "sidecar adds to the apps", pod: memPod([]corev1.Container{sidecar(memContainerOf("log", "memory=1Gi")), memContainerOf("init", "memory=2Gi")},
			memContainerOf("a", "memory=1Gi")), want: cpualloc.Memory{Bytes: 3 * gi}},
		{name: "negative", pod: memPod(nil, memContainerOf("app", "memory=-1Gi")), err: "spec.containers[0] (app): resources.requests.memory: -1Gi is negative"},
		{name: "absurd", pod: memPod(nil, memContainerOf("app", "|memory=2Pi")), err: "resources.limits.memory: 2Pi is more than"},
		// Read exactly, these exponents would build numbers of 10^11 digits.
		{name: "exponent", pod: memPod(nil, memContainerOf("app", "memory=1e122222222111")), err: "is out of range"},
		{name: "zero with an exponent", pod: memPod(nil, memContainerOf("app", "|hugepages-2Mi=e122222222111")), err: "resources.limits.hugepages-2Mi: 0 is out of range"},
		{name: "absurd sum", pod: memPod(nil, memContainerOf("a", "memory=1Pi"), memContainerOf("b", "memory=1Pi")), err: "spec.containers[*].resources.memory: the containers' requests add up to more than"},
		{name: "not whole pages", pod: memPod(nil, memContainerOf("app", "hugepages-2Mi=3Mi")), err: "resources.requests.hugepages-2Mi: 3Mi is not a multiple of the page size (2048 KiB)"},
		{name: "not whole 1Gi pages", pod: memPod([]corev1.Container{memContainerOf("init", "hugepages-1Gi=1536Mi")}, memContainerOf("a", "")),
			err: "spec.initContainers[0] (init): resources.requests.hugepages-1Gi: 1536Mi is not a multiple"},
		{name: "unknown size", pod: memPod(nil, memContainerOf("app", "hugepages-16Mi=32Mi")), err: `resources.requests."hugepages-16Mi": 32Mi: huge pages of that size are not accounted`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodMemory(tc.pod)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v, want %+v", got, err, tc.want)
			}
		})
	}
}

// A pinned pod whose memory cannot be read runs in the shared pool, told
// why; one that reads carries its memory in its CPU need.
func TestPodCPUNeedCarriesMemory(t *testing.T) {
	pod := memPod(nil, memContainerOf("app", "cpu=2 memory=3Gi hugepages-2Mi=8Mi|cpu=2 memory=3Gi hugepages-2Mi=8Mi"))
	pod.Annotations = map[string]string{AnnotationCPUSet: "true"}
	var told []string
	problem := func(reason, format string, args ...any) { told = append(told, reason) }
	need := PodCPUNeed(pod, nil, Trust{}, problem)
	if !need.Exclusive || need.Memory != (cpualloc.Memory{Bytes: 3 * gi, HugePages2Mi: 8 * mi}) || len(told) > 0 {
		t.Fatalf("need %+v, problems %v", need, told)
	}
	pod.Spec.Containers[0].Resources.Requests["hugepages-2Mi"] = resource.MustParse("1Mi")
	if need = PodCPUNeed(pod, nil, Trust{}, problem); need.Exclusive || len(told) != 1 || told[0] != ReasonInvalidMemoryRequest {
		t.Fatalf("need %+v, problems %v", need, told)
	}
	shared := memPod(nil, memContainerOf("app", "memory=-1"))
	if need = PodCPUNeed(shared, nil, Trust{}, problem); need.Memory != (cpualloc.Memory{}) || len(told) != 1 {
		t.Fatalf("a pod in the shared pool: need %+v, problems %v", need, told)
	}
}

func TestStandaloneMemory(t *testing.T) {
	tests := []struct {
		name, resources string
		want            cpualloc.Memory
		err             string
	}{
		{name: "request", resources: "{requests: {memory: 1Gi}, limits: {memory: 2Gi}}", want: cpualloc.Memory{Bytes: gi}},
		{name: "huge pages", resources: "{limits: {cpu: 1, hugepages-2Mi: 4Mi, hugepages-1Gi: 1Gi}}", want: cpualloc.Memory{HugePages2Mi: 4 * mi, HugePages1Gi: gi}},
		{name: "not whole pages", resources: "{requests: {hugepages-1Gi: 100Mi}}", err: "workloads[0].resources.requests.hugepages-1Gi: 100Mi is not a multiple of the page size (1048576 KiB) (workload \"a\")"},
		{name: "absurd", resources: "{requests: {memory: 2Pi}}", err: "workloads[0].resources.requests.memory: 2Pi is more than"},
		{name: "negative", resources: "{limits: {hugepages-2Mi: -2Mi}}", err: "resources.limits.hugepages-2Mi: -2Mi is negative"},
		{name: "unknown size", resources: "{limits: {hugepages-16Mi: 32Mi}}", err: "workloads[0].resources.limits.hugepages-16Mi: unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- {name: a, cgroup: x, annotations: {cpuset-scheduler: \"true\"}, resources: " + tc.resources + "}\n"
			cfg, err := ParseConfig([]byte(raw))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := StandaloneMemory(cfg.Host.Workloads[0])
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v, want %+v", got, err, tc.want)
			}
		})
	}
	// Given to FromHostConfig unchecked (`locus run` builds its workload
	// so), bad memory leaves the workload shared, told why.
	w := hostconfig.Workload{Name: "a", Annotations: map[string]string{AnnotationCPUSet: "true"}}
	w.Resources.Limits.CPU = resource.NewQuantity(1, resource.DecimalSI)
	w.Resources.Requests.Memory = resource.NewQuantity(3<<50, resource.BinarySI)
	s := FromHostConfig(w, "x")
	if s.Plan.CPU.Exclusive || len(s.Problems) != 1 || s.Problems[0].Reason != ReasonInvalidMemoryRequest {
		t.Fatalf("need %+v, problems %v", s.Plan.CPU, s.Problems)
	}
}

// A pod's quantities are text its author chose: PodMemory answers in
// bounded time, with an error naming the field or a need within bounds.
func FuzzPodMemory(f *testing.F) {
	for _, s := range []string{"1Gi", "-1", "2Pi", "3Mi", "1e18", "0.5", "4Mi", "1536Mi"} {
		f.Add("memory", s)
		f.Add("hugepages-2Mi", s)
		f.Add("hugepages-1Gi", s)
	}
	f.Add("hugepages-16Mi", "32Mi")
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add("hugepages-"+s, "2Mi")
		f.Add("memory", s)
	}
	f.Fuzz(func(t *testing.T, name, qty string) {
		q, ok := fuzzseed.ParseQuantity(qty)
		if !ok {
			return
		}
		pod := memPod(nil, corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceName(name): q}}}, corev1.Container{Name: "b", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceName(name): q}}})
		var m cpualloc.Memory
		var err error
		fuzzseed.Timed(t, "PodMemory", func() { m, err = PodMemory(pod) })
		fuzzseed.CheckError(t, err, "resources")
		if err != nil {
			return
		}
		if m.Bytes > MaxMemoryBytes || m.HugePages2Mi > MaxMemoryBytes || m.HugePages1Gi > MaxMemoryBytes ||
			m.HugePages2Mi%(2*mi) != 0 || m.HugePages1Gi%gi != 0 {
			t.Fatalf("accepted %s=%s as %+v", name, qty, m)
		}
	})
}

// A HostConfig's quantities are an operator's text: the file is refused
// naming the field, or every workload's memory is within bounds.
func FuzzStandaloneMemory(f *testing.F) {
	for _, s := range []string{"1Gi", "-2Mi", "3Mi", "2Pi", "1e18", "1536Mi", "0.5"} {
		f.Add(s)
	}
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, qty string) {
		raw := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: a\n  cgroup: x\n  resources: {requests: {memory: " +
			strconv.Quote(qty) + ", hugepages-2Mi: " + strconv.Quote(qty) + "}, limits: {hugepages-1Gi: " + strconv.Quote(qty) + "}}\n"
		var cfg *Config
		var err error
		fuzzseed.Timed(t, "ParseConfig", func() { cfg, err = ParseConfig([]byte(raw)) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		m, err := StandaloneMemory(cfg.Host.Workloads[0])
		if err != nil || m.Bytes > MaxMemoryBytes || m.HugePages2Mi%(2*mi) != 0 || m.HugePages1Gi%gi != 0 {
			t.Fatalf("accepted %q as %+v, %v", qty, m, err)
		}
	})
}

// The scheduler reads every pod through PodMemory: a readable pod costs no
// allocation.
func TestPodMemoryAllocatesNothing(t *testing.T) {
	q := resource.MustParse
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("2")}}},
		{Name: "b", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi"), ResourceHugePages2Mi: q("4Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi"), ResourceHugePages2Mi: q("4Mi")}}},
	}}}
	if m, err := PodMemory(pod); err != nil || m.Bytes != 1<<30 || m.HugePages2Mi != 4<<20 {
		t.Fatalf("PodMemory = %+v, %v", m, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = PodMemory(pod) }); n != 0 {
		t.Fatalf("PodMemory made %.0f allocations", n)
	}
}

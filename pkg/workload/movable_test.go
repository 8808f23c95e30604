package workload

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
)

func TestMovableOf(t *testing.T) {
	for raw, want := range map[string]string{"true": "", "false": "", "True": `"True" is not`, " true": `" true" is not`,
		"yes": `annotation locus.io/movable: "yes" is not "true" or "false"`, "": `"" is not`} {
		m, err := MovableOf(map[string]string{AnnotationMovable: raw})
		if want == "" {
			if err != nil || m != (raw == "true") {
				t.Errorf("%q: %v, %v", raw, m, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) || m {
			t.Errorf("%q: %v, %v; want an error containing %q", raw, m, err, want)
		}
	}
	if m, err := MovableOf(nil); m || err != nil {
		t.Errorf("absent: %v, %v", m, err)
	}
}

// TestMovableFromHostConfig: the movable field wins over the annotation;
// a bad annotation is a problem and leaves the workload in place.
func TestMovableFromHostConfig(t *testing.T) {
	for doc, want := range map[string]struct {
		movable bool
		problem string
	}{
		`{name: a, cgroup: x}`:                                                          {false, ""},
		`{name: a, cgroup: x, movable: true}`:                                           {true, ""},
		`{name: a, cgroup: x, annotations: {locus.io/movable: "true"}}`:                 {true, ""},
		`{name: a, cgroup: x, movable: false, annotations: {locus.io/movable: "true"}}`: {false, ""},
		`{name: a, cgroup: x, annotations: {locus.io/movable: "sure"}}`:                 {false, ReasonInvalidMovable},
		`{name: a, cgroup: x, movable: true, annotations: {locus.io/movable: "sure"}}`:  {true, ""},
	} {
		hc, err := hostconfig.Parse([]byte("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- " + doc + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		s := FromHostConfig(hc.Workloads[0], "x")
		got := ""
		if len(s.Problems) > 0 {
			got = s.Problems[0].Reason
		}
		if s.Plan.Movable != want.movable || got != want.problem {
			t.Errorf("%s: movable %v problem %q, want %v %q", doc, s.Plan.Movable, got, want.movable, want.problem)
		}
	}
}

func TestMayMove(t *testing.T) {
	movable := Workload{Movable: true, CPU: CPUNeed{Exclusive: true, CPUs: 4, Memory: cpualloc.Memory{Bytes: 1 << 30}}}
	if ok, why := MayMove(movable, false); !ok {
		t.Fatalf("an opted-in pinned workload: %s", why)
	}
	with := func(f func(*Workload)) Workload { w := movable; f(&w); return w }
	for name, tc := range map[string]struct {
		w      Workload
		pinned bool
		why    string
	}{
		"not opted in":    {with(func(w *Workload) { w.Movable = false }), false, "not opted in"},
		"bad annotation":  {with(func(w *Workload) { w.Movable, w.MovableInvalid = false, "annotation locus.io/movable: \"x\"" }), false, `"x"`},
		"shared":          {with(func(w *Workload) { w.CPU.Exclusive = false }), false, "no CPUs of its own"},
		"static burst":    {with(func(w *Workload) { w.CPU.Policy = cpualloc.StaticBurst }), false, "static-burst"},
		"terminating":     {with(func(w *Workload) { w.Terminating = true }), false, "terminating"},
		"huge pages 2Mi":  {with(func(w *Workload) { w.CPU.Memory.HugePages2Mi = 2 << 20 }), false, "huge pages"},
		"huge pages 1Gi":  {with(func(w *Workload) { w.CPU.Memory.HugePages1Gi = 1 << 30 }), false, "huge pages"},
		"devices":         {with(func(w *Workload) { w.DeviceResources = []string{"nvidia.com/gpu"} }), false, "nvidia.com/gpu"},
		"pci devices":     {with(func(w *Workload) { w.Devices = []string{"0000:3b:00.0"} }), false, "0000:3b:00.0"},
		"kubelet pinned":  {movable, true, "kubelet"},
		"scheduler chose": {with(func(w *Workload) { w.CPU.Decided = cpuset.New(0, 1, 2, 3) }), false, "scheduler"},
	} {
		if ok, why := MayMove(tc.w, tc.pinned); ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s: may move %v (%q), want not, saying %q", name, ok, why, tc.why)
		}
	}
}

func TestPodDevices(t *testing.T) {
	q := resource.MustParse
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/fpga": q("1")}}}},
		Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("2"), "hugepages-2Mi": q("2Mi"), "nvidia.com/gpu": q("1")},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": q("1"), "kubernetes.io/something": q("1"), "example.com/none": q("0")},
		}}},
	}}
	if got := strings.Join(PodDevices(pod), ","); got != "example.com/fpga,nvidia.com/gpu" {
		t.Fatalf("devices %q", got)
	}
}

// TestMovesSwitchIsRead: the HostConfig's moves.enabled reaches the node's
// config, off unless it says so.
func TestMovesSwitchIsRead(t *testing.T) {
	head := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads: []\n"
	for doc, want := range map[string]bool{head: false, head + "moves: {enabled: false}\n": false, head + "moves: {enabled: true}\n": true} {
		c, err := ParseConfig([]byte(doc))
		if err != nil || c.MovesEnabled != want {
			t.Errorf("%q: moves enabled %v, %v; want %v", doc, c != nil && c.MovesEnabled, err, want)
		}
	}
}

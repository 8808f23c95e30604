package podplan

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/decisiontest"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/decisionsig"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const (
	uid  = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	id1  = "1111111111111111111111111111111111111111111111111111111111111111"
	id2  = "2222222222222222222222222222222222222222222222222222222222222222"
	podB = "kubepods/burstable/pod" + uid
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

type ctr struct {
	name, req, lim, id string
	running            bool
}

func pod(ann, labels map[string]string, qos corev1.PodQOSClass, cs ...ctr) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: uid, Annotations: ann, Labels: labels},
		Status:     corev1.PodStatus{QOSClass: qos, Phase: corev1.PodRunning},
	}
	for _, c := range cs {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.name,
			Resources: corev1.ResourceRequirements{Requests: res(c.req), Limits: res(c.lim)}})
		st := corev1.ContainerStatus{Name: c.name, ContainerID: c.id}
		if c.running {
			st.State.Running = &corev1.ContainerStateRunning{}
		} else {
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st)
	}
	return p
}

func env(present ...string) Env {
	set := map[string]bool{}
	for _, p := range present {
		set[p] = true
	}
	return Env{Driver: podcgroup.Cgroupfs, Exists: func(rel string) bool { return set[rel] },
		Topology: fixture.MustBuild(fixture.MemoryOnly), Trust: workload.Trust{Node: testNode, Keys: testKeys}}
}

// testNode is where env's agent runs.
const testNode = "node-a"

var testKeys, _ = decisionsig.ParseKeys([]byte(decisiontest.KeyFile))

// signed signs the decision a pod carries, if any, as the scheduler does
// for testNode.
func signed(t testing.TB, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	if _, ok := p.Annotations[workload.AnnotationResourceStatus]; ok {
		decisiontest.SignPod(t, p, testNode)
	}
	return p
}

func reasons(w Workload) string {
	var out []string
	for _, p := range w.Problems {
		out = append(out, p.Reason)
	}
	return strings.Join(out, ",")
}

func TestFromPodContainers(t *testing.T) {
	p := pod(nil, nil, corev1.PodQOSBurstable,
		ctr{name: "app", req: "memory=1Gi", lim: "memory=2Gi", id: "containerd://" + id1, running: true},
		ctr{name: "side", id: "containerd://" + id2, running: true},
		ctr{name: "late", running: false})
	w, err := FromPod(p, env(podB, podB+"/"+id1, podB+"/"+id2))
	if err != nil {
		t.Fatal(err)
	}
	if w.Plan.Name != "team/web" || w.Plan.Cgroup != podB || reasons(w) != "" {
		t.Fatalf("workload %q cgroup %q problems %v", w.Plan.Name, w.Plan.Cgroup, w.Problems)
	}
	if len(w.Plan.Containers) != 2 || w.Plan.Containers[0].Cgroup != podB+"/"+id1 || w.Plan.Containers[1].Name != "side" {
		t.Fatalf("containers = %+v, want app and side, not the waiting one", w.Plan.Containers)
	}
	// Memory QoS sees every container of the spec, a request defaulting to nothing here.
	mc := w.Plan.MemQoS.Containers
	if len(mc) != 3 || mc[0].RequestBytes != 1<<30 || mc[0].LimitBytes != 2<<30 || w.Plan.MemQoS.Namespace != "team" || w.Plan.QoS.Kube != memqos.Burstable || w.Plan.MemQoS.Class != memqos.ClassLS || w.Plan.MemQoSInvalid != "" {
		t.Fatalf("memqos = %+v", w.Plan.MemQoS)
	}
	if w.Class != "Burstable" || w.Plan.BE {
		t.Fatalf("class %q BE %v, want Burstable, not BE", w.Class, w.Plan.BE)
	}

	// A container whose ID is not one, and one whose cgroup is missing, are
	// problems; the pod is still managed.
	p.Status.ContainerStatuses[0].ContainerID = "containerd://../../x"
	w, err = FromPod(p, env(podB))
	if err != nil || reasons(w) != "InvalidContainerID,ContainerCgroupNotFound" || len(w.Plan.Containers) != 0 {
		t.Fatalf("err %v problems %v containers %v", err, w.Problems, w.Plan.Containers)
	}
	if !strings.Contains(w.Problems[0].Message, "status.containerStatuses[0]") || !strings.Contains(w.Problems[1].Message, `"side"`) {
		t.Fatalf("messages do not name the container: %v", w.Problems)
	}
}

func TestFromPodCgroupErrors(t *testing.T) {
	p := pod(nil, nil, corev1.PodQOSBurstable)
	if _, err := FromPod(p, env()); !errors.Is(err, ErrNoCgroup) {
		t.Fatalf("no pod cgroup: error = %v, want ErrNoCgroup", err)
	}
	p.UID = "../../../etc"
	if _, err := FromPod(p, env("kubepods/burstable/pod../../../etc")); err == nil || !strings.Contains(err.Error(), "metadata.uid") {
		t.Fatalf("bad uid: error = %v", err)
	}
}

func TestFromPodSystemdCRIO(t *testing.T) {
	p := pod(nil, nil, corev1.PodQOSGuaranteed, ctr{name: "app", req: "cpu=1,memory=1Gi", lim: "cpu=1,memory=1Gi", id: "cri-o://" + id1, running: true})
	sd := "kubepods.slice/kubepods-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427.slice"
	e := env(sd, sd+"/crio-"+id1+".scope")
	e.Driver = podcgroup.Systemd
	w, err := FromPod(p, e)
	if err != nil || len(w.Plan.Containers) != 1 || w.Plan.Containers[0].Cgroup != sd+"/crio-"+id1+".scope" {
		t.Fatalf("= %+v, %v", w.Plan.Containers, err)
	}
}

func TestFromPodCPUNeed(t *testing.T) {
	opt := map[string]string{workload.AnnotationCPUSet: "true"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range opt {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	four := []ctr{{name: "a", req: "cpu=1", lim: "cpu=2"}, {name: "b", req: "cpu=500m", lim: "cpu=2"}}
	tests := []struct {
		name     string
		ann      map[string]string
		cs       []ctr
		excl     bool
		cpus     int
		policy   cpualloc.Policy
		reqMilli int64
		decided  string
		problems string
		mem      cpualloc.Memory
	}{
		{name: "not opted in", ann: nil, cs: four},
		{name: "two containers", ann: opt, cs: four, excl: true, cpus: 4, policy: cpualloc.FullPCPUsThenThreads},
		{name: "static burst", ann: with(map[string]string{workload.AnnotationCPUPolicy: "Static-Burst"}), cs: four, excl: true, cpus: 4, policy: cpualloc.StaticBurst, reqMilli: 1500},
		{name: "bad policy", ann: with(map[string]string{workload.AnnotationCPUPolicy: "fast"}), cs: four, excl: true, cpus: 4, policy: cpualloc.FullPCPUsThenThreads, problems: "InvalidCPUPolicy"},
		{name: "fraction", ann: opt, cs: []ctr{{name: "a", lim: "cpu=1500m"}}, problems: "InvalidCPULimit"},
		{name: "no limit", ann: opt, cs: []ctr{{name: "a", lim: "cpu=1"}, {name: "b"}}, problems: "InvalidCPULimit"},
		{name: "decided", ann: with(map[string]string{workload.AnnotationResourceStatus: `{"cpuset":"2-3,10-11","numaNodes":[0],"policy":"full-pcpus"}`}),
			cs: four, excl: true, cpus: 4, policy: cpualloc.FullPCPUs, decided: "2-3,10-11"},
		{name: "decided without opt-in", ann: map[string]string{workload.AnnotationResourceStatus: `{"cpuset":"4"}`}, cs: four, excl: true, cpus: 1, policy: cpualloc.FullPCPUsThenThreads, decided: "4"},
		{name: "decided on the wrong node", ann: with(map[string]string{workload.AnnotationResourceStatus: `{"cpuset":"2-3","numaNodes":[1]}`}),
			cs: four, excl: true, cpus: 2, policy: cpualloc.FullPCPUsThenThreads, decided: "2-3", problems: "CPUSetConflict"},
		{name: "malformed decision, opted in", ann: with(map[string]string{workload.AnnotationResourceStatus: `{"cpuset":"x"}`}), cs: four, excl: true, cpus: 4, policy: cpualloc.FullPCPUsThenThreads, problems: "InvalidResourceStatus"},
		{name: "malformed decision alone", ann: map[string]string{workload.AnnotationResourceStatus: `{"numaNodes":[0]}`}, cs: four, problems: "InvalidResourceStatus"},
		// Its memory, placed with its CPUs: requests, else limits.
		{name: "memory and huge pages", ann: opt, cs: []ctr{{name: "a", req: "cpu=2,memory=3Gi,hugepages-2Mi=64Mi", lim: "cpu=2,memory=4Gi,hugepages-2Mi=64Mi"},
			{name: "b", lim: "cpu=1,memory=1Gi"}}, excl: true, cpus: 3, policy: cpualloc.FullPCPUsThenThreads,
			mem: cpualloc.Memory{Bytes: 4 << 30, HugePages2Mi: 64 << 20}},
		{name: "memory in the shared pool", ann: nil, cs: []ctr{{name: "a", req: "memory=3Gi"}}},
		{name: "huge pages of no size Locus counts", ann: opt, cs: []ctr{{name: "a", lim: "cpu=2,hugepages-16Mi=32Mi"}}, problems: workload.ReasonInvalidMemoryRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := FromPod(signed(t, pod(tt.ann, nil, corev1.PodQOSBurstable, tt.cs...)), env(podB))
			if err != nil {
				t.Fatal(err)
			}
			n := w.Plan.CPU
			if n.Exclusive != tt.excl || n.CPUs != tt.cpus || n.Policy != tt.policy || n.RequestMilli != tt.reqMilli ||
				n.Decided.String() != tt.decided || reasons(w) != tt.problems || n.Memory != tt.mem {
				t.Fatalf("need %+v decided %q problems %v", n, n.Decided.String(), w.Problems)
			}
		})
	}
}

func TestFromPodClass(t *testing.T) {
	tests := []struct {
		labels map[string]string
		ann    map[string]string
		qos    corev1.PodQOSClass
		class  string
		be     bool
	}{
		{map[string]string{workload.LabelQoSClass: "ls"}, nil, corev1.PodQOSBestEffort, "LS", false},
		{map[string]string{workload.LabelQoSClass: "BE"}, nil, corev1.PodQOSGuaranteed, "BE", true},
		{map[string]string{workload.LegacyQoSClass: "BE"}, nil, corev1.PodQOSBurstable, "BE", true},
		{nil, map[string]string{workload.LegacyQoSClass: "be"}, corev1.PodQOSBurstable, "BE", true},
		{nil, nil, corev1.PodQOSBestEffort, "BestEffort", true},
		{nil, nil, corev1.PodQOSGuaranteed, "Guaranteed", false},
	}
	for _, tt := range tests {
		e := env(podB, "kubepods/pod"+uid, "kubepods/besteffort/pod"+uid)
		w, err := FromPod(pod(tt.ann, tt.labels, tt.qos), e)
		if err != nil || w.Class != tt.class || w.Plan.BE != tt.be {
			t.Errorf("%v %v %s: class %q BE %v, %v; want %q %v", tt.labels, tt.ann, tt.qos, w.Class, w.Plan.BE, err, tt.class, tt.be)
		}
	}
}

// A running sidecar (a restartable init container) is listed before the
// app containers, with its CPU limit; an init container that has finished
// is not; a bad ID of one names its status field.
func TestFromPodInitContainers(t *testing.T) {
	const id3 = "3333333333333333333333333333333333333333333333333333333333333333"
	p := pod(nil, nil, corev1.PodQOSBurstable, ctr{name: "app", lim: "cpu=2", id: "containerd://" + id1, running: true})
	always := corev1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = []corev1.Container{{Name: "fetch", Resources: corev1.ResourceRequirements{Limits: res("cpu=3")}},
		{Name: "log", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Limits: res("cpu=1")}}}
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "fetch", ContainerID: "containerd://" + id3, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}},
		{Name: "log", ContainerID: "containerd://" + id2, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	w, err := FromPod(p, env(podB, podB+"/"+id1, podB+"/"+id2, podB+"/"+id3))
	if err != nil || reasons(w) != "" {
		t.Fatal(err, w.Problems)
	}
	got := w.Plan.Containers
	if len(got) != 2 || got[0].Name != "log" || got[0].Cgroup != podB+"/"+id2 || got[0].CPULimitMilli != 1000 || got[1].Name != "app" {
		t.Fatalf("containers = %+v, want log (1 CPU) then app", got)
	}
	p.Status.InitContainerStatuses[1].ContainerID = "containerd://../x"
	w, _ = FromPod(p, env(podB, podB+"/"+id1))
	if reasons(w) != "InvalidContainerID" || !strings.Contains(w.Problems[0].Message, `status.initContainerStatuses[1] (container "log")`) {
		t.Fatalf("problems %v", w.Problems)
	}
}

// A pod bound here and pending whose cgroup the kubelet has not made yet is
// mapped, awaited: its CPU need and QoS are read, it lists no container. Any
// other pod without a cgroup is not: unbound, running, being deleted.
func TestFromPodAwaitsItsCgroup(t *testing.T) {
	const podCg = "kubepods/pod" + uid
	pending := func() *corev1.Pod {
		p := pod(map[string]string{"cpuset-scheduler": "true"}, nil, corev1.PodQOSGuaranteed, ctr{name: "w", req: "cpu=2", lim: "cpu=2", id: "containerd://" + strings.Repeat("a", 64)})
		p.Spec.NodeName, p.Status.Phase = "n1", corev1.PodPending
		return p
	}
	w, err := FromPod(pending(), env())
	if err != nil || !w.Plan.Awaited || w.Plan.Cgroup != podCg || len(w.Plan.Containers) != 0 || len(w.Problems) != 0 {
		t.Fatalf("pending pod without a cgroup: %+v, %v; want awaited in %s, no container, no problem", w.Plan, err, podCg)
	}
	if w.Plan.CPU.CPUs != 2 || !w.Plan.CPU.Exclusive || w.Class != "Guaranteed" {
		t.Fatalf("awaited pod's CPU need %+v, class %q: want 2 exclusive CPUs, Guaranteed", w.Plan.CPU, w.Class)
	}
	noPhase := pending()
	noPhase.Status.Phase = ""
	if w, err := FromPod(noPhase, env()); err != nil || !w.Plan.Awaited {
		t.Fatalf("a bound pod with no phase yet: awaited %v, %v", w.Plan.Awaited, err)
	}
	for name, change := range map[string]func(*corev1.Pod){
		"unbound":       func(p *corev1.Pod) { p.Spec.NodeName = "" },
		"running":       func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning },
		"being deleted": func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} },
		"ended":         func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
	} {
		p := pending()
		change(p)
		if _, err := FromPod(p, env()); !errors.Is(err, ErrNoCgroup) {
			t.Errorf("%s pod without a cgroup: error %v, want ErrNoCgroup", name, err)
		}
	}
	if w, err := FromPod(pending(), env(podCg)); err != nil || w.Plan.Awaited {
		t.Fatalf("pending pod whose cgroup exists: awaited %v, %v; want not awaited", w.Plan.Awaited, err)
	}
}

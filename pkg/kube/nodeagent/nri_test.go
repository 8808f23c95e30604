package nodeagent_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/nritest"
	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// watchGate holds back what the agent's watch of pods delivers while it is
// held, as an API server whose watch lags: the bytes read meanwhile are
// handed on once it is released. Other requests pass.
type watchGate struct {
	mu   sync.Mutex
	open chan struct{} // nil: not held
}

func (g *watchGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = make(chan struct{})
	}
}

func (g *watchGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open != nil {
		close(g.open)
		g.open = nil
	}
}

func (g *watchGate) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") == "true" {
			resp.Body = &gatedBody{ReadCloser: resp.Body, g: g, ctx: r.Context()}
		}
		return resp, err
	})
}

type gatedBody struct {
	io.ReadCloser
	g   *watchGate
	ctx context.Context
}

// Read hands on what it read only once the gate is open: a read already
// waiting for the next event when the gate is held is held too.
func (b *gatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.g.mu.Lock()
	open := b.g.open
	b.g.mu.Unlock()
	if open != nil {
		select {
		case <-open:
		case <-b.ctx.Done():
		}
	}
	return n, err
}

// startNRI runs the agent with its NRI plugin connected to a fake runtime,
// its watch of pods behind gate, its options changed by mods.
func (n *node) startNRI(gate *watchGate, mods ...func(*kubeOptions)) *nritest.Runtime {
	n.t.Helper()
	sock := filepath.Join(nritest.SocketDir(n.t), "nri.sock")
	rt := nritest.New(n.t, sock, nil, nil)
	rt.Start(n.t)
	n.start(append([]func(*kubeOptions){func(o *kubeOptions) {
		o.Agent.NRI = agent.NRIOptions{Enabled: true, Socket: sock}
		o.Config.Wrap(gate.wrap)
	}}, mods...)...)
	n.t.Cleanup(gate.release) // before the agent stops (cleanups run last first)
	rt.WaitRegistered(n.t, 1)
	return rt
}

// pending creates and binds a pod and makes its pod cgroup, as the kubelet
// does before the runtime creates its sandbox and containers.
func (n *node) pending(pod *corev1.Pod) (*corev1.Pod, *api.PodSandbox) {
	n.t.Helper()
	pod.Namespace = n.ns
	pod = n.bind(cp.CreatePod(n.t, pod))
	n.kubelet.mkcg(n.kubelet.PodCgroup(pod))
	return pod, &api.PodSandbox{Id: "sb-" + string(pod.UID), Uid: string(pod.UID), Namespace: pod.Namespace, Name: pod.Name,
		Labels: pod.Labels, Annotations: pod.Annotations}
}

// created asks the runtime to create a pod's container and returns the
// cpuset.cpus and mems it is created with.
func created(t *testing.T, rt *nritest.Runtime, sb *api.PodSandbox, name string) (cpus, mems string) {
	t.Helper()
	r, err := rt.Create(sb, &api.Container{Id: sb.Uid + "-" + name, PodSandboxId: sb.Id, Name: name, State: api.ContainerState_CONTAINER_CREATED})
	if err != nil {
		t.Fatalf("create container %s of pod %s: %v", name, sb.Name, err)
	}
	cpu := r.GetAdjust().GetLinux().GetResources().GetCpu()
	return cpu.GetCpus(), cpu.GetMems()
}

// A container whose pod the agent's watch has not delivered yet is created
// with its pod's decision all the same: the agent asks the API server for
// the pod. A shared pod gets the shared pool, without the CPUs held by a
// pinned pod beside it; a pod the scheduler decided (cpuset-scheduler,
// locus.io/resource-status) gets the CPUs and NUMA nodes decided, saved in
// the checkpoint. The reconcile loop agrees before the watch catches up,
// and after.
func TestNRICreatesPinnedBeforeTheWatch(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	pinned := n.create(decidedPod("pinned", `{"cpuset": "2-3", "numaNodes": [0]}`, "2"))
	gate := &watchGate{}
	rt := n.startNRI(gate)
	n.waitFile(n.kubelet.ContainerCgroup(pinned, "app"), "cpuset.cpus", "2-3")
	gate.hold()

	shared := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "late-shared"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}}
	pod, sb := n.pending(shared)
	cpus, _ := created(t, rt, sb, "app")
	want := cpuset.New(1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15).String() // all but the reserved 0,8 and the pinned 2-3
	if cpus != want {
		t.Errorf("shared pod's container created with cpuset.cpus %q, want the shared pool %s", cpus, want)
	}

	decided, sb := n.pending(decidedPod("late-decided", `{"cpuset": "12-13", "numaNodes": [1]}`, "2"))
	cpus, mems := created(t, rt, sb, "app")
	if cpus != "12-13" || mems != "1" {
		t.Errorf("decided pod's container created with cpuset.cpus %q mems %q, want the scheduler's 12-13 on node 1", cpus, mems)
	}
	if a := n.checkpoint().Assignments[n.ns+"/late-decided"]; a.CPUs.String() != "12-13" {
		t.Errorf("checkpoint assigns %s to late-decided, want 12-13", a.CPUs)
	}
	// The source lists the pod now: the reconcile publishes its CPUs while
	// the watch still holds it back.
	waitNRT(t, n.name, "listing late-decided", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		return ct.Exclusive[n.ns+"/late-decided"] == "12-13" && ct.Exclusive[n.ns+"/pinned"] == "2-3"
	})

	gate.release()
	decided, shared = n.kubelet.Run(callCtx(t), decided), n.kubelet.Run(callCtx(t), pod)
	n.waitFile(n.kubelet.ContainerCgroup(decided, "app"), "cpuset.cpus", "12-13")
	n.waitFile(n.kubelet.ContainerCgroup(shared, "app"), "cpuset.cpus", cpuset.New(1, 4, 5, 6, 7, 9, 10, 11, 14, 15).String())
	for _, name := range []string{"late-shared", "late-decided"} {
		for _, e := range events(t, n.ns, "Pod", name) {
			if e.Reason == "CreatedUnpinned" {
				t.Errorf("pod %s: %s %s", name, e.Reason, e.Message)
			}
		}
	}
}

// A container created while a reconcile holds the loop longer than the
// plugin waits for it is created on its pod's CPUs all the same, from the
// last decision, within the runtime's request timeout (2 s), and counted
// so: every reconcile here sleeps between its decision and its writes for
// longer than the plugin waits.
func TestNRICreatesFromTheLastDecisionWhileTheLoopIsHeld(t *testing.T) {
	const slow = 3 * time.Second // each reconcile's sleep before its writes
	n := newNode(t, cgroup.V2, false)
	whole := n.create(pinnedPod("whole", ""))
	addr := freeAddr(t)
	rt := n.startNRI(&watchGate{}, func(o *kubeOptions) {
		o.Agent.Resync, o.Agent.DebugWriteDelay, o.Agent.MetricsAddr = time.Hour, slow, addr
	})
	waitNRT(t, n.name, "listing the pinned pod", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		return len(ct.Exclusive) == 1
	})
	_, ct, _ := nrtOf(t, n.name)
	wholeCPUs := ct.Exclusive[n.ns+"/whole"]
	n.waitFile(n.kubelet.ContainerCgroup(whole, "web"), "cpuset.cpus", wholeCPUs)
	time.Sleep(slow + time.Second) // the reconciles of the start are over

	// A new cgroup under the pod wakes a reconcile, which holds the loop
	// when the runtime asks about the pod's next container.
	n.kubelet.mkcgAtomic(n.kubelet.ContainerCgroup(whole, "side"))
	time.Sleep(300 * time.Millisecond)
	sb := &api.PodSandbox{Id: "sb-" + string(whole.UID), Uid: string(whole.UID), Namespace: whole.Namespace, Name: whole.Name,
		Labels: whole.Labels, Annotations: whole.Annotations}
	start := time.Now()
	cpus, _ := created(t, rt, sb, "late")
	took := time.Since(start)
	if cpus != wholeCPUs {
		t.Errorf("created with cpuset.cpus %q, want its pod's %s from the last decision", cpus, wholeCPUs)
	}
	if took < 900*time.Millisecond || took >= 2*time.Second {
		t.Errorf("answered after %v: want the plugin's wait for the loop (1 s), inside the runtime's timeout (2 s)", took)
	}
	if got := scrapeValue(t, addr, `locus_nri_containers_total{result="LastDecision"}`); got != 1 {
		t.Errorf("locus_nri_containers_total{result=\"LastDecision\"} = %v, want 1", got)
	}
}

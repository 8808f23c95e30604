package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/nritest"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const memQoSOn = `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "lowLimitPercent": 50}}}}`

// nriNode is an agent in Kubernetes mode (a fake source) with its NRI
// plugin on, running its loop until the test ends, on a fake cgroup tree.
type nriNode struct {
	a    *Agent
	src  *fakeSource
	tree *cgroupTree
	sock string
}

func newNRINode(t testing.TB, v cgroup.Version, nriOpts NRIOptions, pods ...source.Workload) *nriNode {
	return newNRINodeOn(t, fixture.Small4, "0-3", v, nriOpts, pods...)
}

func newNRINodeOn(t testing.TB, shape fixture.Shape, cpus string, v cgroup.Version, nriOpts NRIOptions, pods ...source.Workload) *nriNode {
	t.Helper()
	tree := newCgroupTree(t, v, false, cpus)
	for _, p := range pods {
		tree.mkcg(p.Plan.Cgroup)
		for _, c := range p.Plan.Containers {
			tree.mkcg(c.Cgroup)
		}
	}
	src := &fakeSource{snap: source.Snapshot{Reserved: cpuset.New(0), SLO: lsLow50(t), Workloads: pods}}
	n := &nriNode{src: src, tree: tree, sock: filepath.Join(nritest.SocketDir(t), "nri.sock")}
	nriOpts.Enabled, nriOpts.Socket = true, n.sock
	a, err := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), SysfsRoot: sysfs(t, shape),
		CgroupRoot: tree.root, CgroupVersion: v, Source: src, EventSink: src.emit, Resync: time.Hour, NRI: nriOpts,
		V1SoftLimitForLow: v == cgroup.V1,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n.a = a
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; a.Close() })
	return n
}

// pinning waits for the status to say path.
func (n *nriNode) pinning(t *testing.T, path string) status.Pinning {
	t.Helper()
	var p status.Pinning
	waitFor(t, func() bool {
		if got := n.a.pub.Current().Node.Pinning; got != nil {
			p = *got
		}
		return p.Path == path
	})
	return p
}

func (n *nriNode) events(reason string) []eventlog.Event {
	n.src.mu.Lock()
	defer n.src.mu.Unlock()
	var out []eventlog.Event
	for _, e := range n.src.events {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// sandbox is the runtime's view of pod(name): its UID is in its cgroup's
// name, as the kubelet names them.
func sandbox(name string) *api.PodSandbox {
	return &api.PodSandbox{Id: "sb-" + name, Uid: "pod-" + name, Namespace: "ns", Name: name}
}

func container(pod, name string) *api.Container {
	return &api.Container{Id: pod + "-" + name, PodSandboxId: "sb-" + pod, Name: name, State: api.ContainerState_CONTAINER_RUNNING,
		Linux: &api.LinuxContainer{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-3", Mems: "0"}}}}
}

// notRunning is a pod whose container is being created: its pod cgroup
// exists, no container of it runs yet.
func notRunning(name string, cpus int) source.Workload {
	w := pod(name, cpus)
	w.Plan.Containers = nil
	return w
}

// A container is created with the CPUs, mems and memory QoS values the
// reconcile loop then keeps: one decision, reached first by the runtime.
func TestNRIPinsAtCreation(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			n := newNRINode(t, v, NRIOptions{}, notRunning("a", 2))
			rt := nritest.New(t, n.sock, nil, nil)
			rt.Start(t)
			p := n.pinning(t, status.PinAtCreation)
			rt.WaitRegistered(t, 1)
			if !strings.Contains(p.Runtime, "containerd") {
				t.Errorf("pinning %+v names no runtime", p)
			}
			r, err := rt.Create(sandbox("a"), container("a", "app"))
			if err != nil {
				t.Fatal(err)
			}
			res := r.GetAdjust().GetLinux().GetResources()
			cpus, err := cpuset.Parse(res.GetCpu().GetCpus())
			if err != nil || cpus.Size() != 2 || cpus.Contains(0) {
				t.Fatalf("created with cpuset.cpus %q, want 2 CPUs but the reserved 0", res.GetCpu().GetCpus())
			}
			if res.GetCpu().GetMems() != "0" {
				t.Errorf("created with cpuset.mems %q, want 0", res.GetCpu().GetMems())
			}
			if v == cgroup.V2 && res.GetUnified()["memory.low"] != "536870912" {
				t.Errorf("created with unified %v, want memory.low 536870912", res.GetUnified())
			}
			if v == cgroup.V1 && len(res.GetUnified()) != 0 {
				t.Errorf("v1: unified %v given; the runtime cannot carry them on v1", res.GetUnified())
			}
			if got := res.GetMemory().GetReservation().GetValue(); v == cgroup.V1 && got != 536870912 {
				t.Errorf("v1: created with memory reservation %d, want the soft limit 536870912", got)
			}
			if got := n.events("CPUsAssigned"); len(got) != 1 {
				t.Errorf("CPUsAssigned told %d times at creation, want once: %v", len(got), got)
			}
			// The container runs: the reconcile loop writes what it was created with.
			n.tree.mkcg("kubepods/pod-a/app")
			n.src.mu.Lock()
			n.src.snap.Workloads = []source.Workload{pod("a", 2)}
			n.src.mu.Unlock()
			n.a.wake(0)
			waitFor(t, func() bool {
				return n.tree.file("kubepods/pod-a/app", "cpuset.cpus") == cpus.String()
			})
			if got := n.events("CPUsAssigned"); len(got) != 1 {
				t.Errorf("CPUsAssigned told %d times in all, want once: the reconcile decided again", len(got))
			}
		})
	}
}

// The agent was down while containers started: at connection the runtime
// offers them, and Synchronize updates those not on their CPUs.
func TestNRISynchronizeRepairs(t *testing.T) {
	n := newNRINode(t, cgroup.V2, NRIOptions{}, pod("a", 2), pod("b", 0))
	rt := nritest.New(t, n.sock, []*api.PodSandbox{sandbox("a"), sandbox("b")},
		[]*api.Container{container("a", "app"), container("b", "app")})
	rt.Start(t)
	n.pinning(t, status.PinAtCreation)
	rt.WaitRegistered(t, 1)
	var updates []*api.ContainerUpdate
	waitFor(t, func() bool {
		var syncs int
		updates, syncs = rt.Updates()
		return syncs == 1
	})
	got := map[string]string{}
	for _, u := range updates {
		got[u.GetContainerId()] = u.GetLinux().GetResources().GetCpu().GetCpus()
	}
	a, err := cpuset.Parse(got["a-app"])
	if err != nil || a.Size() != 2 || a.Contains(0) {
		t.Errorf("update of a's container: cpus %q, want its 2 CPUs (updates %v)", got["a-app"], got)
	}
	if b, ok := got["b-app"]; !ok || b != "1-3" && b != cpuset.New(1, 2, 3).Difference(a).String() {
		t.Errorf("update of b's container (shared pool): cpus %q (updates %v)", b, got)
	}
}

// A pod the agent does not know yet starts as it is (fail open), with a
// Warning; failing closed refuses it only when it asks for CPUs of its own.
func TestNRIUnknownPod(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failClosed bool
		optIn      bool
		refused    bool
	}{{"fail open", false, true, false}, {"fail closed", true, true, true}, {"fail closed, shared pod", true, false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNRINode(t, cgroup.V2, NRIOptions{FailClosed: tc.failClosed})
			rt := nritest.New(t, n.sock, nil, nil)
			rt.Start(t)
			n.pinning(t, status.PinAtCreation)
			rt.WaitRegistered(t, 1)
			rt.WaitRegistered(t, 1)
			sb := sandbox("late")
			if tc.optIn {
				sb.Annotations = map[string]string{workload.AnnotationCPUSet: "true"}
			}
			r, err := rt.Create(sb, container("late", "app"))
			if (err != nil) != tc.refused {
				t.Fatalf("create: error %v, want refused %v", err, tc.refused)
			}
			if err == nil && nritest.CPUs(r) != "" {
				t.Errorf("an undecided container got cpus %q", nritest.CPUs(r))
			}
			reason := "CreatedUnpinned"
			if tc.refused {
				reason = "CreationRefused"
			}
			waitFor(t, func() bool { return len(n.events(reason)) == 1 })
			if e := n.events(reason)[0]; e.Workload != "ns/late" || e.Type != eventlog.Warning || !strings.Contains(e.Message, "not known") {
				t.Errorf("event %+v", e)
			}
		})
	}
}

// A stopped sandbox frees its pod's CPUs at once, before the pod is gone;
// a container created in a new sandbox of the pod takes them again.
func TestNRIStopPodFrees(t *testing.T) {
	n := newNRINode(t, cgroup.V2, NRIOptions{}, pod("a", 2))
	rt := nritest.New(t, n.sock, nil, nil)
	rt.Start(t)
	n.pinning(t, status.PinAtCreation)
	rt.WaitRegistered(t, 1)
	waitFor(t, func() bool { return len(n.events("CPUsAssigned")) == 1 })
	if err := rt.StopPodSandbox(context.Background(), &api.StopPodSandboxRequest{Pod: sandbox("a")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(n.events("CPUsReleased")) == 1 })
	// The kubelet makes the pod a new sandbox: its container is pinned again.
	r, err := rt.Create(sandbox("a"), container("a", "app"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cpuset.Parse(nritest.CPUs(r)); err != nil || c.Size() != 2 {
		t.Errorf("the new sandbox's container created with cpus %q, want 2", nritest.CPUs(r))
	}
}

// Without the socket the node works as without NRI, and says why.
func TestNRIMissingSocket(t *testing.T) {
	n := newNRINode(t, cgroup.V2, NRIOptions{}, pod("a", 2))
	p := n.pinning(t, status.PinAfterStart)
	if !strings.Contains(p.Reason, "does not exist") {
		t.Errorf("pinning %+v does not say the socket is missing", p)
	}
	waitFor(t, func() bool {
		c, err := cpuset.Parse(n.tree.file("kubepods/pod-a/app", "cpuset.cpus"))
		return err == nil && c.Size() == 2
	})
}

// BenchmarkNRICreateContainer times one container's creation through the
// runtime's NRI side and the agent's decision at creation (the pod known,
// its CPUs already held), with n pods on the node: a third pinned, the rest
// shared, as one container of a burst sees it. Its peer, in the same run, is
// one reconcile of the same node deciding afresh (the last decision
// forgotten), carried out on the loop the same way.
func BenchmarkNRICreateContainer(b *testing.B) {
	for _, n := range []int{30, 100, 300} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			node := newNRINodeOn(b, fixture.Intel2S96C, "0-191", cgroup.V2, NRIOptions{}, thirdPinned(n)...)
			rt := nritest.New(b, node.sock, nil, nil)
			rt.Start(b)
			rt.WaitRegistered(b, 1)
			sb, c := sandbox("p000"), container("p000", "app")
			b.Run("create", func(b *testing.B) {
				for b.Loop() {
					r, err := rt.Create(sb, c)
					if err != nil || nritest.CPUs(r) == "" {
						b.Fatalf("create: %v, cpus %q", err, nritest.CPUs(r))
					}
				}
			})
			b.Run("reconcile", func(b *testing.B) {
				defer reportCPU(b)()
				for b.Loop() {
					node.a.call(context.Background(), func() {
						node.a.mem.Last = nil
						if res := node.a.Reconcile(); len(res.Errors) > 0 {
							b.Errorf("reconcile: %v", res.Errors)
						}
					})
				}
			})
		})
	}
}

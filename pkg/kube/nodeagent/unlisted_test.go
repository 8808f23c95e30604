package nodeagent_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// A container whose cgroup appears under its pod's before the pod's status
// lists it gets the pod's cpuset from the reconcile its cgroup's appearance
// wakes: the resync is an hour away and no status changes meanwhile. A pod
// whose containers each get a part of its CPUs (container scope) leaves
// such a container alone, as its name is not known. Once the status lists
// the container, its cpuset stays: both paths decide the same. For both
// cgroup versions and both drivers.
func TestUnlistedContainer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       cgroup.Version
		systemd bool
	}{{"v1-cgroupfs", cgroup.V1, false}, {"v1-systemd", cgroup.V1, true}, {"v2-cgroupfs", cgroup.V2, false}, {"v2-systemd", cgroup.V2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, tc.v, tc.systemd)
			whole := n.create(pinnedPod("whole", ""))
			n.start(func(o *kubeOptions) { o.Agent.Resync = time.Hour })
			waitNRT(t, n.name, "listing the pinned pod", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
				return len(ct.Exclusive) == 1
			})
			_, ct, _ := nrtOf(t, n.name)
			wholeCPUs := ct.Exclusive[n.ns+"/whole"]
			n.waitFile(n.kubelet.ContainerCgroup(whole, "web"), "cpuset.cpus", wholeCPUs)

			// Bound, its cgroups made, its status not posted: as the
			// kubelet leaves it while it starts many pods at once.
			split := n.bindOnly(pinnedPod("split", workload.ScopeContainer))
			late := n.bindOnly(pinnedPod("late", ""))
			for _, p := range []*corev1.Pod{split, late} {
				n.kubelet.mkcgAtomic(n.kubelet.PodCgroup(p))
			}
			splitWeb := n.kubelet.ContainerCgroup(split, "web")
			n.kubelet.mkcgAtomic(splitWeb)
			inherited := n.kubelet.File(splitWeb, "cpuset.cpus")
			lateWeb := n.kubelet.ContainerCgroup(late, "web")
			n.kubelet.mkcgAtomic(lateWeb)

			held, err := cpuset.Parse(wholeCPUs)
			if err != nil {
				t.Fatal(err)
			}
			got := n.waitFileMatch(lateWeb, "cpuset.cpus", "4 CPUs of its own", func(s string) bool {
				set, err := cpuset.Parse(s)
				return s != "" && err == nil && set.Size() == 4 && set.Intersection(held.Union(reserved)).IsEmpty()
			})
			waitNRT(t, n.name, "giving the late pod the CPUs written", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
				return ct.Exclusive[n.ns+"/late"] == got
			})
			if s := n.kubelet.File(splitWeb, "cpuset.cpus"); s != inherited {
				t.Errorf("the unlisted container of a container-scope pod was written: cpuset.cpus %q, want the inherited %q", s, inherited)
			}

			// The status catches up: the container's cpuset stays.
			n.postRunning(late, "web")
			for start := time.Now(); time.Since(start) < time.Second; {
				if s := n.kubelet.File(lateWeb, "cpuset.cpus"); s != got {
					t.Fatalf("once listed, cpuset.cpus of the late pod's container changed from %s to %s", got, s)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// bindOnly creates and binds a pod and posts no status.
func (n *node) bindOnly(pod *corev1.Pod) *corev1.Pod {
	n.t.Helper()
	pod.Namespace = n.ns
	return cp.BindPod(n.t, cp.CreatePod(n.t, pod), n.name)
}

// postRunning posts the pod's status with the containers named running.
func (n *node) postRunning(pod *corev1.Pod, names ...string) {
	n.t.Helper()
	ctx := callCtx(n.t)
	pods := cp.Client.CoreV1().Pods(pod.Namespace)
	pod, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	for _, name := range names {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: name, Image: "app", ImageID: "docker.io/library/app", Ready: true,
			ContainerID: "containerd://" + ContainerID(pod, name),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
	}
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		n.t.Fatal(err)
	}
}

// mkcgAtomic makes one cgroup whose parent exists, as the kernel does: the
// directory appears with its files in it. It is filled beside the tree and
// moved into place, so the agent, woken by the directory appearing, never
// sees it without its files.
func (k *fakeKubelet) mkcgAtomic(rel string) {
	k.t.Helper()
	k.mkcgHolding(rel, nil)
}

// mkcgHolding is mkcgAtomic with the files of values holding those values
// from the start, as a runtime creating a container with them (NRI).
func (k *fakeKubelet) mkcgHolding(rel string, values map[string]string) {
	k.t.Helper()
	parent := filepath.Dir(rel)
	for _, c := range k.controllers() {
		files := v2Files
		if k.v == cgroup.V1 {
			files = v1Files[c]
		}
		stage, err := os.MkdirTemp(k.root, ".stage-")
		if err != nil {
			k.t.Fatal(err)
		}
		for name, val := range files {
			if c == "cpuset" && strings.HasPrefix(name, "cpuset.") {
				val = k.get(c, parent, name) // v1 copies the parent's
			}
			if v, ok := values[name]; ok {
				val = v
			}
			if err := os.WriteFile(filepath.Join(stage, name), []byte(val+"\n"), 0o644); err != nil {
				k.t.Fatal(err)
			}
		}
		if err := os.Rename(stage, k.dir(c, rel)); err != nil {
			k.t.Fatal(err)
		}
	}
}

// v1AndV2 are the node setups the early-path tests run on: each cgroup
// version, with a driver each.
var v1AndV2 = []struct {
	name    string
	v       cgroup.Version
	systemd bool
}{{"v1-cgroupfs", cgroup.V1, false}, {"v2-systemd", cgroup.V2, true}}

// A container whose cgroup appears under a decided pod's gets the pod's
// cpuset while a reconcile runs, not after it: every reconcile here sleeps
// between its decision and its writes for longer than the container waits,
// so no reconcile could have written it. A container-scope pod's new
// container is still left alone.
func TestNewContainerBetweenReconciles(t *testing.T) {
	const slow = 3 * time.Second // each reconcile's sleep before its writes
	for _, tc := range v1AndV2 {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, tc.v, tc.systemd)
			whole := n.create(pinnedPod("whole", ""))
			split := n.create(pinnedPod("split", workload.ScopeContainer))
			addr := freeAddr(t)
			n.start(func(o *kubeOptions) {
				o.Agent.Resync, o.Agent.DebugWriteDelay, o.Agent.MetricsAddr = time.Hour, slow, addr
			})
			waitNRT(t, n.name, "listing the pinned pods", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
				return len(ct.Exclusive) == 2
			})
			_, ct, _ := nrtOf(t, n.name)
			wholeCPUs := ct.Exclusive[n.ns+"/whole"]
			n.waitFile(n.kubelet.ContainerCgroup(whole, "web"), "cpuset.cpus", wholeCPUs)

			// The split pod's new container wakes a reconcile, which
			// is asleep when the whole pod's new container appears.
			splitSide := n.kubelet.ContainerCgroup(split, "side")
			n.kubelet.mkcgAtomic(splitSide)
			inherited := n.kubelet.File(splitSide, "cpuset.cpus")
			time.Sleep(300 * time.Millisecond)
			side := n.kubelet.ContainerCgroup(whole, "side")
			start := time.Now()
			n.kubelet.mkcgAtomic(side)
			n.waitFile(side, "cpuset.cpus", wholeCPUs)
			if took := time.Since(start); took >= slow/2 {
				t.Fatalf("the new container got its pod's cpuset after %v: not before the reconcile's writes (it sleeps %v first)", took, slow)
			}
			if inherited == wholeCPUs {
				t.Fatalf("the fixture's new container starts with the pod's CPUs %s already", inherited)
			}
			time.Sleep(slow + time.Second) // the reconcile running ends, and the one it woke
			if s := n.kubelet.File(splitSide, "cpuset.cpus"); s != inherited {
				t.Errorf("the new container of a container-scope pod was written: cpuset.cpus %q, want the inherited %q", s, inherited)
			}
			if s := n.kubelet.File(side, "cpuset.cpus"); s != wholeCPUs {
				t.Errorf("the new container's cpuset.cpus became %q, want the pod's %q", s, wholeCPUs)
			}
			// Counted, in the metric and in the status's pinning.
			if got := scrapeValue(t, addr, "locus_cgroup_early_writes_total"); got != 1 {
				t.Errorf("locus_cgroup_early_writes_total = %v, want 1", got)
			}
			if p := n.status().Node.Pinning; p == nil || p.CgroupWatch == nil {
				t.Errorf("the status's pinning has no cgroup watch: %+v", p)
			} else if w := *p.CgroupWatch; w.EarlyWrites != 1 || w.Watched < 3 || w.Problem != "" {
				t.Errorf("the status's cgroup watch: %+v, want 1 early write, the QoS tiers and pods watched, no problem", w)
			}
		})
	}
}

// scrapeValue reads one sample (its name with its labels, as exposed) from
// the agent's /metrics; 0 when absent.
func scrapeValue(t *testing.T, addr, sample string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metrics: %q", line)
			}
			return f
		}
	}
	return 0
}

// A pod bound to the node is decided before the kubelet makes its cgroup:
// its CPUs are held (the NodeResourceTopology shows them), and a container
// appearing as soon as the pod's cgroup does gets them at once. Every
// reconcile here sleeps between its decision and its writes, and one is
// asleep when the pod's cgroup and its container's appear, so no reconcile
// woken by them could have written the container in time.
func TestPodDecidedBeforeItsCgroup(t *testing.T) {
	const slow = 3 * time.Second // each reconcile's sleep before its writes
	for _, tc := range v1AndV2 {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, tc.v, tc.systemd)
			split := n.create(pinnedPod("split", workload.ScopeContainer))
			n.start(func(o *kubeOptions) { o.Agent.Resync, o.Agent.DebugWriteDelay = time.Hour, slow })
			waitNRT(t, n.name, "listing the running pod", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
				return len(ct.Exclusive) == 1
			})

			// Bound, no cgroup made yet, no status.
			early := n.bindOnly(pinnedPod("early", ""))
			waitNRT(t, n.name, "holding the CPUs of the pod not set up yet", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
				return ct.Exclusive[n.ns+"/early"] != ""
			})
			_, ct, _ := nrtOf(t, n.name)
			held := ct.Exclusive[n.ns+"/early"]
			if _, err := os.Stat(n.kubelet.dir(n.kubelet.controllers()[0], n.kubelet.PodCgroup(early))); err == nil {
				t.Fatal("the fixture made the pod's cgroup already")
			}

			// The split pod's new container wakes a reconcile, which is
			// asleep when the early pod's cgroups appear.
			n.kubelet.mkcgAtomic(n.kubelet.ContainerCgroup(split, "side"))
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			n.kubelet.mkcgAtomic(n.kubelet.PodCgroup(early))
			web := n.kubelet.ContainerCgroup(early, "web")
			n.kubelet.mkcgAtomic(web)
			n.waitFile(web, "cpuset.cpus", held)
			if took := time.Since(start); took >= slow/2 {
				t.Fatalf("the new container got its pod's cpuset after %v: not before the reconcile's writes (it sleeps %v first)", took, slow)
			}

			// A pod deleted before the kubelet made its cgroup leaves
			// nothing behind: its CPUs, its checkpoint entry, its mark.
			gone := n.bindOnly(pinnedPod("gone", ""))
			waitNRT(t, n.name, "holding the CPUs of the second pod not set up", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
				return ct.Exclusive[n.ns+"/gone"] != ""
			})
			goneCg := n.kubelet.PodCgroup(gone)
			if !strings.Contains(string(n.fileBytes(agent.OriginalsFile)), goneCg) {
				t.Fatalf("the decided pod's cgroup is not marked in the originals: %s", n.fileBytes(agent.OriginalsFile))
			}
			zero := int64(0)
			if err := cp.Client.CoreV1().Pods(n.ns).Delete(callCtx(t), gone.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			waitNRT(t, n.name, "releasing the deleted pod's CPUs", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
				return ct.Exclusive[n.ns+"/gone"] == ""
			})
			kubetest.WaitFor(t, "no state of the deleted pod", 20*time.Second, func(context.Context) (bool, error) {
				_, entry := n.checkpoint().Workloads[n.ns+"/gone"]
				return !entry && !strings.Contains(string(n.fileBytes(agent.OriginalsFile)), goneCg), nil
			})
			for _, p := range n.status().Node.Problems {
				t.Errorf("node problem: %s", p)
			}
		})
	}
}

// On cgroup v1 a container's cgroup is made with empty cpusets, and the
// runtime copies its parent's into them just after, over anything written
// in between. Neither the reconcile its appearance wakes nor the early path
// writes it while it is empty; once the runtime has filled it, it gets the
// pod's cpuset without another reconcile.
func TestNewContainerWrittenOnceFilled(t *testing.T) {
	n := newNode(t, cgroup.V1, false)
	whole := n.create(pinnedPod("whole", ""))
	n.start(func(o *kubeOptions) { o.Agent.Resync = time.Hour })
	waitNRT(t, n.name, "listing the pinned pod", func(_ *nrt.Object, ct nrt.CPUTopology) bool {
		return len(ct.Exclusive) == 1
	})
	_, ct, _ := nrtOf(t, n.name)
	cpus := ct.Exclusive[n.ns+"/whole"]
	n.waitFile(n.kubelet.ContainerCgroup(whole, "web"), "cpuset.cpus", cpus)

	side := n.kubelet.ContainerCgroup(whole, "side")
	n.kubelet.mkcgHolding(side, map[string]string{"cpuset.cpus": "", "cpuset.mems": ""})
	for start := time.Now(); time.Since(start) < time.Second; time.Sleep(20 * time.Millisecond) {
		if c, m := n.kubelet.File(side, "cpuset.cpus"), n.kubelet.File(side, "cpuset.mems"); c != "" || m != "" {
			t.Fatalf("written while the runtime had not filled it: cpuset.cpus %q, cpuset.mems %q", c, m)
		}
	}
	pod := n.kubelet.PodCgroup(whole)
	n.kubelet.set("cpuset", side, "cpuset.cpus", n.kubelet.get("cpuset", pod, "cpuset.cpus")) // the runtime's copy
	n.kubelet.set("cpuset", side, "cpuset.mems", n.kubelet.get("cpuset", pod, "cpuset.mems"))
	n.waitFile(side, "cpuset.cpus", cpus)
}

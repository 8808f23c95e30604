package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
)

// settle is how long a restarted kubelet or containerd is given to undo
// something, if it would: more than the kubelet's syncFrequency (10 s), so every
// pod has been synced again, and than the agent's resync (10 s).
const settle = 15 * time.Second

// Scenario 4: the agent, the kubelet and containerd restarted in turn while a
// pinned pod, a shared pod and the seed's LS memory QoS pod run. No container
// restarts, no setting is lost (the files and the processes' allowed CPUs are as
// before), and nothing writes what is already right: the agent makes no cgroup
// write and rewrites neither its checkpoint nor the originals. Then the pods
// are deleted and no Locus state about them remains.
func TestRestartsKeepEverything(t *testing.T) {
	n := need(t)
	n.sloConfig(t)
	ns := n.namespace(t, "restart")
	redis, pinned, shared, cpus := n.threePods(t, ns)
	pinnedDir := n.containerCgroup(t, pinned, "w", "cpuset")
	others := cpuset.New(0, 1).Difference(cpus).String()
	pods := []*corev1.Pod{redis, pinned, shared}
	want := n.snapshot(t, pods)
	checkAllowed(t, pinnedDir, cpus.String())
	checkAllowed(t, n.containerCgroup(t, shared, "w", "cpuset"), others)
	t.Logf("pinned to %s, shared pool %s", cpus, others)

	for _, component := range []string{"agent", "kubelet", "containerd"} {
		writes := n.metrics(t)["locus_cgroup_writes_total"]
		state, podsState, since := n.agentState(t), n.podsState(t, ns, pods), time.Now()
		n.restart(t, component)
		if component == "agent" {
			writes = 0
			// It has reconciled since: its first reconcile re-adopted the pods.
			kubetest.WaitFor(t, "two reconciles of the restarted agent", fileTimeout, func(context.Context) (bool, error) {
				return n.metrics(t)["locus_reconcile_duration_seconds_count"] >= 2, nil
			})
		} else {
			time.Sleep(settle)
		}
		for _, p := range pods {
			n.waitRunning(t, ns, p.Name)
		}
		if got := n.snapshot(t, pods); got != want {
			t.Errorf("after restarting %s the node differs:\n got %s\nwant %s", component, got, want)
		}
		checkAllowed(t, pinnedDir, cpus.String())
		if component == "agent" && n.mode == "chart" {
			// The restarted container is a new cgroup of the agent's own pod.
			n.checkUntouched(t, "restarting the agent", ns, pods, since, podsState)
			continue
		}
		if got := n.metrics(t)["locus_cgroup_writes_total"]; got != writes {
			t.Errorf("after restarting %s the agent wrote %v cgroup files, want none", component, got-writes)
		}
		for name, before := range state {
			if after := n.agentState(t)[name]; after != before {
				t.Errorf("after restarting %s the agent rewrote %s:\n%s", component, name, after)
			}
		}
	}

	// Deleting the pods leaves nothing of them in the agent's state.
	n.deleteAll(t, ns)
	kubetest.WaitFor(t, "no state of "+ns+" in the agent", fileTimeout, func(context.Context) (bool, error) {
		for name, content := range n.agentState(t) {
			if strings.Contains(content, ns+"/") {
				return false, &stateError{name, content}
			}
		}
		st, err := os.ReadFile(filepath.Join(n.dir, "agent", "status.json"))
		if err != nil || strings.Contains(string(st), ns+"/") {
			return false, err
		}
		for k := range n.metrics(t) {
			if strings.Contains(k, ns+"/") {
				return false, &stateError{"metrics", k}
			}
		}
		return true, nil
	})
}

type stateError struct{ where, what string }

func (e *stateError) Error() string { return e.where + " still names the pods: " + e.what }

// podSpec is a pod bound to the node (no scheduler involved) running the
// workload with args: cpu sets an equal CPU request and limit, memory "R/L" a
// memory request R and limit L.
type podSpec struct {
	name                string
	annotations, labels map[string]string
	cpu, memory         string
	args                []string
}

func (n *e2eNode) createPod(t *testing.T, ns string, s podSpec) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: s.name, Annotations: s.annotations, Labels: s.labels},
		Spec: corev1.PodSpec{NodeName: n.name, Containers: []corev1.Container{{Name: "w"}}}}
	r := &pod.Spec.Containers[0].Resources
	if s.cpu != "" {
		r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s.cpu)}
	}
	if req, lim, ok := strings.Cut(s.memory, "/"); ok {
		r.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(req)}
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[corev1.ResourceMemory] = resource.MustParse(lim)
	}
	n.runnable(&pod.Spec, s.args...)
	created, err := n.cp.Client.CoreV1().Pods(ns).Create(ctxT(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// waitCPUs waits until the cgroup's cpuset.cpus holds size CPUs, and returns them.
func waitCPUs(t *testing.T, dir string, size int) cpuset.CPUSet {
	t.Helper()
	var got cpuset.CPUSet
	kubetest.WaitFor(t, dir+" bound to its own CPUs", fileTimeout, func(context.Context) (bool, error) {
		c, err := cpuset.Parse(readFile(t, filepath.Join(dir, "cpuset.cpus")))
		got = c
		return err == nil && c.Size() == size, err
	})
	return got
}

// checkAllowed checks that every process of the cgroup may run exactly on cpus.
func checkAllowed(t *testing.T, dir, cpus string) {
	t.Helper()
	for _, pid := range procs(t, dir) {
		if got := procStatus(t, pid, "Cpus_allowed_list"); got != cpus {
			t.Errorf("pid %d of %s: Cpus_allowed_list %s, want %s", pid, dir, got, cpus)
		}
	}
}

// snapshot is what must survive a restart: each container's ID and restart
// count, and the files Locus manages.
func (n *e2eNode) snapshot(t *testing.T, pods []*corev1.Pod) string {
	t.Helper()
	var b strings.Builder
	for _, p := range pods {
		cur, err := n.cp.Client.CoreV1().Pods(p.Namespace).Get(ctxT(t), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cur.Status.ContainerStatuses {
			b.WriteString(p.Name + "/" + c.Name + " id=" + c.ContainerID[len(c.ContainerID)-8:] +
				" restarts=" + itoa(int(c.RestartCount)))
			for _, f := range []string{"cpuset/cpuset.cpus", "cpuset/cpuset.mems", "memory/memory.soft_limit_in_bytes"} {
				ctrl, file, _ := strings.Cut(f, "/")
				b.WriteString(" " + file + "=" + readFile(t, filepath.Join(n.containerCgroup(t, cur, c.Name, ctrl), file)))
			}
			b.WriteString("; ")
		}
	}
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// threePods starts the scenarios' pods that a restart or an upgrade must keep
// as they are: the seed's LS memory QoS pod (smaller: its 2 CPUs would leave
// none for the others) protecting its request, a pinned pod and a shared one,
// and waits until the node is settled: the pinned pod on its one CPU, the two
// others in the shared pool, the LS pod's soft limit written. It returns the
// pinned pod's CPU.
func (n *e2eNode) threePods(t *testing.T, ns string) (redis, pinned, shared *corev1.Pod, cpus cpuset.CPUSet) {
	t.Helper()
	redis = n.createPod(t, ns, podSpec{name: "redis", labels: map[string]string{"koordinator.sh/qosClass": "LS"},
		annotations: map[string]string{"koordinator.sh/memoryQOS": `{"policy": "auto", "lowLimitPercent": 100}`}, memory: "64Mi/128Mi", args: []string{"-mem", "32Mi"}})
	pinned = n.createPod(t, ns, podSpec{name: "pinned", annotations: map[string]string{"cpuset-scheduler": "true"},
		cpu: "1", memory: "64Mi/64Mi", args: []string{"-children", "2"}})
	shared = n.createPod(t, ns, podSpec{name: "shared", args: []string{"-children", "1"}})
	redis, pinned, shared = n.waitRunning(t, ns, redis.Name), n.waitRunning(t, ns, pinned.Name), n.waitRunning(t, ns, shared.Name)
	cpus = waitCPUs(t, n.containerCgroup(t, pinned, "w", "cpuset"), 1)
	others := cpuset.New(0, 1).Difference(cpus).String()
	for _, p := range []*corev1.Pod{redis, shared} {
		waitFile(t, filepath.Join(n.containerCgroup(t, p, "w", "cpuset"), "cpuset.cpus"), others)
	}
	waitFile(t, filepath.Join(n.containerCgroup(t, redis, "w", "memory"), "memory.soft_limit_in_bytes"), "67108864")
	return redis, pinned, shared, cpus
}

// agentState is the content of the agent's checkpoint and originals files,
// with their modification times: a rewrite of the same content shows too.
func (n *e2eNode) agentState(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"checkpoint.json", "originals.json", "memory-locality.json"} {
		path := filepath.Join(n.dir, "agent", name)
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			// Not written yet (memory-locality.json before any locality
			// run): it must stay that way.
			out[name] = "absent"
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[name] = fi.ModTime().Format(time.RFC3339Nano) + " " + readFile(t, path)
	}
	return out
}

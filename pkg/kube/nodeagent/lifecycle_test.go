package nodeagent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// boundPod opts in to two CPUs of its own and to memory QoS.
func boundPod(name string) *corev1.Pod {
	p := webPod(name)
	p.Annotations = map[string]string{"cpuset-scheduler": "true", workload.AnnotationMemoryQoS: `{"policy": "auto", "lowLimitPercent": 100}`}
	r := &p.Spec.Containers[0].Resources
	r.Limits[corev1.ResourceCPU] = resource.MustParse("2")
	r.Requests[corev1.ResourceCPU] = resource.MustParse("1")
	return p
}

func (n *node) checkpoint() state.Checkpoint {
	n.t.Helper()
	c, err := (&state.Store{Dir: n.stateDir}).Load()
	if err != nil {
		n.t.Fatal(err)
	}
	return c
}

// originalKeys lists the originals recorded under the state directory.
func (n *node) originalKeys() []string {
	var keys []string
	for k := range n.originals() {
		keys = append(keys, k)
	}
	return keys
}

// originals are the originals saved under the state directory, by key.
func (n *node) originals() map[string]string {
	var f struct {
		Originals map[string]string `json:"originals"`
	}
	_ = json.Unmarshal(n.fileBytes(agent.OriginalsFile), &f)
	return f.Originals
}

func (n *node) hasOriginalsOf(pod *corev1.Pod) bool {
	for _, k := range n.originalKeys() {
		if strings.Contains(k, string(pod.UID)) || strings.Contains(k, strings.ReplaceAll(string(pod.UID), "-", "_")) {
			return true
		}
	}
	return false
}

func deletePod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	zero := int64(0)
	if err := cp.Client.CoreV1().Pods(pod.Namespace).Delete(callCtx(t), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

// Deleting a pod cleans its state: its CPUs go back to the pool, the files
// of cgroups still there get their original values back, the checkpoint,
// the originals, the status and the NodeResourceTopology forget it. Both
// orders are covered: the API object first (the kubelet still tearing the
// pod down), and the cgroups first.
func TestDeletedPodLeavesNoState(t *testing.T) {
	n := newNode(t, cgroup.V1, false)
	apiFirst, cgroupsFirst := n.create(boundPod("api-first")), n.create(boundPod("cgroups-first"))
	n.start()
	for _, p := range []*corev1.Pod{apiFirst, cgroupsFirst} {
		cg := n.kubelet.ContainerCgroup(p, "web")
		n.waitFileMatch(cg, "cpuset.cpus", "2 CPUs", func(s string) bool { c, err := cpuset.Parse(s); return err == nil && c.Size() == 2 })
		n.waitFile(cg, "memory.low", "1073741824")
	}
	waitNRT(t, n.name, "listing both pods", func(_ *nrt.Object, ct nrt.CPUTopology) bool { return len(ct.Exclusive) == 2 })
	if c := n.checkpoint(); len(c.Assignments) != 2 || len(c.Workloads) != 2 || !n.hasOriginalsOf(apiFirst) {
		t.Fatalf("before: checkpoint %+v, originals %v", c, n.originalKeys())
	}

	deletePod(t, apiFirst)
	cg := n.kubelet.ContainerCgroup(apiFirst, "web")
	n.waitFile(cg, "cpuset.cpus", "0-15") // as created: the parent's
	n.waitFile(cg, "memory.low", "0")
	n.waitFile(n.kubelet.PodCgroup(apiFirst), "memory.low", "0")
	waitEvent(t, n.ns, "Pod", "api-first", corev1.EventTypeNormal, "CPUsReleased")
	n.kubelet.Remove(apiFirst)

	// Gone cgroups are not an API change: the pod's deletion right after
	// is what the agent sees, with nothing left to restore.
	n.kubelet.Remove(cgroupsFirst)
	deletePod(t, cgroupsFirst)

	waitUntil(t, "the state to be empty", func() bool {
		c := n.checkpoint()
		return len(c.Assignments) == 0 && len(c.Workloads) == 0 && !n.hasOriginalsOf(apiFirst) && !n.hasOriginalsOf(cgroupsFirst) &&
			len(n.status().Workloads) == 0
	})
	if keys := n.originalKeys(); len(keys) != 0 {
		t.Errorf("originals left: %v", keys)
	}
	waitNRT(t, n.name, "listing no pod", func(o *nrt.Object, ct nrt.CPUTopology) bool {
		return len(ct.Exclusive) == 0 && o.Zones[0].Resources[0].Available.Value() == 6
	})
}

// A restarted agent finds everything as it left it: no cgroup file, no
// checkpoint or originals write, no NodeResourceTopology update, and the
// pods keep their CPUs.
func TestRestartMakesNoWrites(t *testing.T) {
	n := newNode(t, cgroup.V2, true)
	n.resQoS = n.name + "-qos"
	setConfigMap(t, n.resQoS, sloconfig.ConfigKeyResourceQoS, lsConfig(true, 100))
	pods := n.apply([]string{"testdata/redis-demo.yaml", "testdata/redis-cpuset.yaml"}, "Pod")
	pods["web"] = n.create(boundPod("web"))
	first := n.start()
	redis := n.kubelet.ContainerCgroup(pods["redis"], "redis")
	cpus := n.waitFileMatch(redis, "cpuset.cpus", "4 CPUs", func(s string) bool { c, err := cpuset.Parse(s); return err == nil && c.Size() == 4 })
	// redis-demo's policy auto is the recommended parameters: on v2 they
	// write no file (the watermarks are Anolis files), so web carries the
	// memory QoS writes here.
	n.waitFile(n.kubelet.ContainerCgroup(pods["web"], "web"), "memory.low", "1073741824")
	waitNRT(t, n.name, "listing both bound pods", func(_ *nrt.Object, ct nrt.CPUTopology) bool { return len(ct.Exclusive) == 2 })
	time.Sleep(300 * time.Millisecond) // let a last publish land
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	before := n.kubelet.Mtimes()
	stateFiles := []string{"checkpoint.json", agent.OriginalsFile}
	stateBefore := mtimes(t, n.stateDir, stateFiles...)
	statusBefore := mtimes(t, n.stateDir, status.File)[status.File]
	_, _, rv := nrtOf(t, n.name)
	requests := n.writes.len()

	n.start()
	waitUntil(t, "the restarted agent's first reconcile", func() bool {
		return mtimes(t, n.stateDir, status.File)[status.File] != statusBefore
	})
	time.Sleep(500 * time.Millisecond) // a publish, if any, lands within the min interval

	after := n.kubelet.Mtimes()
	for p, m := range before {
		if after[p] != m {
			t.Errorf("%s was written by the restarted agent", strings.TrimPrefix(p, n.kubelet.root))
		}
	}
	for f, m := range mtimes(t, n.stateDir, stateFiles...) {
		if stateBefore[f] != m {
			t.Errorf("%s was written by the restarted agent", f)
		}
	}
	if _, _, rv2 := nrtOf(t, n.name); rv2 != rv {
		t.Errorf("NodeResourceTopology updated by the restarted agent (resourceVersion %s -> %s)", rv, rv2)
	}
	// Only events may be posted (a warning about this kernel, once per run);
	// an update the apiserver finds equal keeps the resourceVersion, so the
	// requests themselves are checked.
	for _, r := range n.writes.since(requests) {
		if !strings.Contains(r, "/events") {
			t.Errorf("the restarted agent sent %s", r)
		}
	}
	if got := n.kubelet.File(redis, "cpuset.cpus"); got != cpus {
		t.Errorf("redis moved from %s to %s", cpus, got)
	}
}

func mtimes(t *testing.T, dir string, names ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = fi.ModTime().UnixNano()
	}
	return out
}

// --once reconciles, publishes the NodeResourceTopology and returns.
func TestOnce(t *testing.T) {
	n := newNode(t, cgroup.V1, true)
	pod := n.create(boundPod("web"))
	o := nodeagentOptions(n)
	o.Agent.Once = true
	if err := runKube(callCtx(t), o); err != nil {
		t.Fatal(err)
	}
	if c, err := cpuset.Parse(n.kubelet.File(n.kubelet.ContainerCgroup(pod, "web"), "cpuset.cpus")); err != nil || c.Size() != 2 {
		t.Fatalf("after --once: cpuset.cpus %v, %v", c, err)
	}
	if _, ct, _ := nrtOf(t, n.name); ct.Exclusive[n.ns+"/web"] == "" {
		t.Fatalf("after --once: NodeResourceTopology without the pod: %v", ct.Exclusive)
	}
}

// --dry-run prints the writes and changes nothing: no cgroup file, no
// event (not even about a malformed ConfigMap), no NodeResourceTopology.
func TestDryRunChangesNothing(t *testing.T) {
	n := configNode(t, cgroup.V2, false, lsConfig(true, 150))
	pod := n.create(boundPod("web"))
	before := n.kubelet.Mtimes()
	var out strings.Builder
	o := nodeagentOptions(n)
	o.Agent.DryRun, o.Agent.Out = true, &out
	if err := runKube(callCtx(t), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "write "+filepath.Join(n.kubelet.root, n.kubelet.ContainerCgroup(pod, "web"), "cpuset.cpus")) {
		t.Errorf("dry run output does not show the pod's cpuset write:\n%s", out.String())
	}
	for p, m := range n.kubelet.Mtimes() {
		if before[p] != m {
			t.Errorf("dry run wrote %s", p)
		}
	}
	time.Sleep(500 * time.Millisecond) // events are posted asynchronously
	if evs := events(t, "kube-system", "ConfigMap", n.resQoS); len(evs) != 0 {
		t.Errorf("dry run posted events: %v", evs)
	}
	if _, err := cp.Dynamic.Resource(nrt.GVR).Get(callCtx(t), n.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry run published a NodeResourceTopology: %v", err)
	}
}

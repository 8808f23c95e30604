package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/status"
)

// quiet is how long nobody may write the pods' cpusets once both are placed.
const quiet = 60 * time.Second

// Beside the kubelet's static CPU manager (the node brought up with
// LOCUS_E2E_CPU_MANAGER=static: CPU 0 reserved, CPU 1 the only one it can
// give): a Burstable cpuset-scheduler pod is pinned by Locus to CPU 1; a
// Guaranteed one-CPU pod then gets CPU 1 from the kubelet. The kubelet wins:
// Locus warns the first pod (KubeletCPUConflict, then CPUAllocationFailed:
// no CPU is left) and moves it to the shared CPU 0, the status and the
// NodeResourceTopology say CPU 1 is the kubelet's, and for 60 s neither
// pod's cpuset changes, the agent writes no cgroup file and the two pods
// never share a CPU.
func TestKubeletStaticCPUManager(t *testing.T) {
	n := need(t)
	raw, err := os.ReadFile(filepath.Join(n.dir, "kubelet", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kubelet.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CPUManagerPolicy != "static" {
		t.Skip("the node's kubelet runs cpuManagerPolicy none; this test runs on the static variant: LOCUS_E2E_CPU_MANAGER=static hack/e2e.sh test -run TestKubeletStaticCPUManager")
	}
	ns := n.namespace(t, "kubelet")
	// The pinned pod is told that the kubelet took its CPU, and that no
	// other CPU is left for it (CPU 0 is reserved).
	n.expected[ns+"/KubeletCPUConflict"], n.expected[ns+"/CPUAllocationFailed"] = true, true

	// A Burstable pod with a CPU of its own from Locus: limit 1, request 0,
	// so that the Guaranteed pod still fits the one allocatable CPU.
	pinned := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pinned", Annotations: map[string]string{"cpuset-scheduler": "true"}},
		Spec: corev1.PodSpec{NodeName: n.name, Containers: []corev1.Container{{Name: "w", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	n.runnable(&pinned.Spec)
	if pinned, err = n.cp.Client.CoreV1().Pods(ns).Create(ctxT(t), pinned, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pinned = n.waitRunning(t, ns, pinned.Name)
	pinnedDir := n.containerCgroup(t, pinned, "w", "cpuset")
	waitFile(t, filepath.Join(pinnedDir, "cpuset.cpus"), "1")
	// Without NRI the kubelet writes its default set into a container it
	// did not pin once, at its first reconcile after the container started
	// (it has no record of what it last wrote there), and the agent writes
	// the pod's CPU back at its next reconcile: measured, not asserted. With
	// NRI that write reaches the agent's plugin as an update, which keeps the
	// pin: nothing may undo it.
	reverted, undone := watchFile(t, filepath.Join(pinnedDir, "cpuset.cpus"), "1", 15*time.Second)
	t.Logf("the kubelet's first reconcile: the Locus pin undone %d times, for %v in all", reverted, undone)
	if n.withNRI(t) && reverted > 0 {
		t.Errorf("with NRI the kubelet undid the Locus pin %d times (%v in all)", reverted, undone)
	}
	waitFile(t, filepath.Join(pinnedDir, "cpuset.cpus"), "1")

	g := n.createPod(t, ns, podSpec{name: "guaranteed", cpu: "1", memory: "64Mi/64Mi"})
	g = n.waitRunning(t, ns, g.Name)
	if g.Status.QOSClass != corev1.PodQOSGuaranteed {
		t.Fatalf("pod %s is %s, want Guaranteed", g.Name, g.Status.QOSClass)
	}
	gDir := n.containerCgroup(t, g, "w", "cpuset")
	waitFile(t, filepath.Join(gDir, "cpuset.cpus"), "1")
	waitFile(t, filepath.Join(pinnedDir, "cpuset.cpus"), "0")
	n.waitEvent(t, ns, "Pod", pinned.Name, corev1.EventTypeWarning, "KubeletCPUConflict", "cpus 1 are the kubelet's")
	n.waitEvent(t, ns, "Pod", pinned.Name, corev1.EventTypeWarning, "CPUAllocationFailed", "not enough free CPUs")

	kubetest.WaitFor(t, "the agent's status to name the kubelet's CPU", fileTimeout, func(context.Context) (bool, error) {
		var st status.Status
		raw, err := os.ReadFile(filepath.Join(n.dir, "agent", "status.json"))
		if err == nil {
			err = json.Unmarshal(raw, &st)
		}
		k := st.Node.Kubelet
		return err == nil && st.Node.KubeletCPUs == "1" && k != nil && k.CPUManagerPolicy == "static" && k.ReservedCPUs == "0", err
	})
	kubetest.WaitFor(t, "the NodeResourceTopology to name the kubelet's CPU", fileTimeout, func(ctx context.Context) (bool, error) {
		obj, err := n.cp.Dynamic.Resource(nrt.GVR).Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ct, err := nrt.ReadCPUTopology(obj.GetAnnotations()[nrt.AnnotationCPUTopology])
		return err == nil && ct.Kubelet == "1" && ct.Reserved == "0", err
	})

	// Nobody fights: sampled every 200 ms for a minute.
	writes := n.metrics(t)["locus_cgroup_writes_total"]
	files := map[string]string{filepath.Join(pinnedDir, "cpuset.cpus"): "0", filepath.Join(gDir, "cpuset.cpus"): "1"}
	changes, samples := 0, 0
	for end := time.Now().Add(quiet); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for f, want := range files {
			if got := readFile(t, f); got != want {
				changes++
				t.Errorf("%s = %q after %d samples, want %q", f, got, samples, want)
			}
		}
		samples++
	}
	if got := n.metrics(t)["locus_cgroup_writes_total"]; got != writes {
		t.Errorf("the agent wrote %v cgroup files in %v beside the kubelet", got-writes, quiet)
	}
	checkAllowed(t, gDir, "1")
	checkAllowed(t, pinnedDir, "0")
	t.Logf("%d samples of both cpusets over %v: %d changes; agent cgroup writes %v before and after", samples, quiet, changes, writes)
}

// watchFile samples a file every 100 ms for d: how many times it left want,
// and for how long in all.
func watchFile(t *testing.T, path, want string, d time.Duration) (int, time.Duration) {
	t.Helper()
	times, away, was := 0, time.Duration(0), true
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		is := readFile(t, path) == want
		if was && !is {
			times++
		}
		if !is {
			away += 100 * time.Millisecond
		}
		was = is
	}
	return times, away
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/locus-project/locus/internal/kubetest"
)

// cgroupRoot is the host's cgroup v1 mount, where the kubelet (cgroupRoot "/",
// driver cgroupfs) makes kubepods in every controller; in the guest's node
// (hack/e2e-guest.sh) it is the one cgroup2 hierarchy.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupV2 says the node's cgroups are one cgroup2 hierarchy.
var cgroupV2 = func() bool {
	_, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	return err == nil
}()

// Timeouts of the waits: generous, since the machine is shared and a kubelet on
// two cores starts a pod in seconds, not milliseconds. A guest's emulated CPUs
// are slower still: LOCUS_E2E_WAIT_SCALE multiplies them, as it does the
// start-up waits of hack/e2e-lib.sh.
var (
	podTimeout  = 90 * time.Second * waitScale()
	fileTimeout = 30 * time.Second * waitScale()
)

func waitScale() time.Duration {
	n, err := strconv.Atoi(os.Getenv("LOCUS_E2E_WAIT_SCALE"))
	if err != nil || n < 1 || n > 100 {
		return 1
	}
	return time.Duration(n)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a namespace for one test; at the end its pods are deleted
// and waited for until their cgroups are gone, so the next test starts on an
// empty node.
func (n *e2eNode) namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := n.cp.CreateNamespace(t, prefix)
	t.Cleanup(func() { n.deleteAll(t, ns) })
	// The ServiceAccount admission refuses pods until the controller-manager has
	// made the namespace's default service account; their token volume waits for
	// kube-root-ca.crt.
	kubetest.WaitFor(t, "the service account and CA of "+ns, fileTimeout, func(ctx context.Context) (bool, error) {
		if _, err := n.cp.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, err
		}
		_, err := n.cp.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, err
	})
	return ns
}

func (n *e2eNode) deleteAll(t *testing.T, ns string) {
	if n.deleted[ns] {
		return
	}
	n.deleted[ns] = true
	ctx := context.Background()
	deletion := time.Now()
	pods := n.cp.Client.CoreV1().Pods(ns)
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("list pods of %s: %v", ns, err)
		return
	}
	// podsLeft lists the pods of ns, and logs any made since the teardown began.
	known := map[types.UID]bool{}
	for _, p := range list.Items {
		known[p.UID] = true
	}
	podsLeft := func(ctx context.Context) (int, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		for _, p := range l.Items {
			if !known[p.UID] {
				known[p.UID] = true
				t.Logf("a pod made during the teardown of %s: %s", ns, p.Name)
			}
		}
		return len(l.Items), nil
	}
	// The Deployments go first, in the foreground: their ReplicaSets are marked
	// deleted before their pods are, so none makes a pod in place of one deleted
	// here, bound and then deleted in the middle of the teardown, whose container
	// the kubelet may still create (a Warning that says nothing of the agent).
	deployments := n.cp.Client.AppsV1().Deployments(ns)
	fg := metav1.DeletePropagationForeground
	_ = deployments.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &fg}, metav1.ListOptions{})
	kubetest.WaitFor(t, "the Deployments of "+ns+" and their pods to be gone", 2*podTimeout, func(ctx context.Context) (bool, error) {
		l, err := deployments.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		_, err = podsLeft(ctx)
		return len(l.Items) == 0, err
	})
	_ = pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	kubetest.WaitFor(t, "the pods of "+ns+" to be gone", 2*podTimeout, func(ctx context.Context) (bool, error) {
		left, err := podsLeft(ctx)
		return err == nil && left == 0, err
	})
	for _, p := range list.Items {
		dir := n.podCgroup(t, &p, "cpu")
		kubetest.WaitFor(t, "cgroup "+dir+" to be removed", podTimeout, func(context.Context) (bool, error) {
			_, err := os.Stat(dir)
			return os.IsNotExist(err), nil
		})
	}
	if err := n.cp.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete namespace %s: %v", ns, err)
	}
	// A pod that runs and goes away normally is no problem: the agent should
	// have said nothing alarming about it, while it ran or while it was deleted.
	warnings := map[string]int{}
	var first []string
	for _, e := range n.agentEvents(t, ns) {
		if e.Type != corev1.EventTypeWarning || n.expected[ns+"/"+e.Reason] {
			continue
		}
		when := "while the pods ran"
		if !e.Time.Before(deletion) {
			when = "while the pods were deleted"
		}
		key := e.Reason + " " + when
		if warnings[key]++; warnings[key] == 1 {
			first = append(first, e.Workload+": "+e.Reason+": "+e.Message)
		}
	}
	if len(warnings) > 0 {
		t.Errorf("the agent posted warnings about the pods of %s (count by reason %v); the first of each:\n%s",
			ns, warnings, strings.Join(first, "\n"))
	}
}

// agentEvent is a line of the agent's events.jsonl.
type agentEvent struct {
	Time                            time.Time
	Type, Reason, Workload, Message string
}

// agentEvents are the events the agent recorded about the pods of ns.
func (n *e2eNode) agentEvents(t testing.TB, ns string) []agentEvent {
	t.Helper()
	var out []agentEvent
	for _, line := range strings.Split(readFile(t, filepath.Join(n.dir, "agent", "events.jsonl")), "\n") {
		var e agentEvent
		if json.Unmarshal([]byte(line), &e) == nil && strings.HasPrefix(e.Workload, ns+"/") {
			out = append(out, e)
		}
	}
	return out
}

// waitRunning waits until every container of the pod runs and has an ID.
func (n *e2eNode) waitRunning(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	kubetest.WaitFor(t, "pod "+ns+"/"+name+" to run", podTimeout, func(ctx context.Context) (bool, error) {
		p, err := n.cp.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
			return false, fmt.Errorf("phase %s, %d container statuses", p.Status.Phase, len(p.Status.ContainerStatuses))
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running == nil || c.ContainerID == "" {
				return false, fmt.Errorf("container %s not running", c.Name)
			}
		}
		pod = p
		return true, nil
	})
	return pod
}

// podCgroup is the pod's cgroup in one v1 controller (on v2 in the one
// hierarchy, whatever the controller), spelled out here rather
// than taken from pkg/kube/podcgroup, so that the layout the kubelet really uses
// is checked against the one the agent assumes: Guaranteed pods directly under
// kubepods, the others under their QoS class.
func (n *e2eNode) podCgroup(t testing.TB, p *corev1.Pod, controller string) string {
	tier := map[corev1.PodQOSClass]string{corev1.PodQOSGuaranteed: "", corev1.PodQOSBurstable: "burstable",
		corev1.PodQOSBestEffort: "besteffort"}[p.Status.QOSClass]
	if cgroupV2 {
		controller = ""
	}
	return filepath.Join(cgroupRoot, controller, "kubepods", tier, "pod"+string(p.UID))
}

// containerCgroup is the container's cgroup: named after its ID under the pod's.
func (n *e2eNode) containerCgroup(t testing.TB, p *corev1.Pod, container, controller string) string {
	t.Helper()
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == container {
			id, ok := strings.CutPrefix(c.ContainerID, "containerd://")
			if !ok {
				t.Fatalf("pod %s container %s: ID %q is not containerd's", p.Name, container, c.ContainerID)
			}
			return filepath.Join(n.podCgroup(t, p, controller), id)
		}
	}
	t.Fatalf("pod %s has no status for container %s", p.Name, container)
	return ""
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.TrimSpace(string(b))
}

// waitFile waits until the file holds want.
func waitFile(t testing.TB, path, want string) {
	t.Helper()
	kubetest.WaitFor(t, fmt.Sprintf("%s = %s", path, want), fileTimeout, func(context.Context) (bool, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, err
		}
		if got := strings.TrimSpace(string(b)); got != want {
			return false, fmt.Errorf("it is %s", got)
		}
		return true, nil
	})
}

// procs are the processes of a cgroup.
func procs(t testing.TB, dir string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Fields(readFile(t, filepath.Join(dir, "cgroup.procs"))) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s/cgroup.procs: %q", dir, f)
		}
		out = append(out, pid)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no processes", dir)
	}
	return out
}

// procStatus returns one field of /proc/PID/status.
func procStatus(t testing.TB, pid int, field string) string {
	t.Helper()
	for _, line := range strings.Split(readFile(t, fmt.Sprintf("/proc/%d/status", pid)), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return ""
}

// restart restarts one component of the node through hack/e2e.sh.
func (n *e2eNode) restart(t *testing.T, name string) { n.e2e(t, "restart", name) }

// e2e runs hack/e2e.sh with args (restart, stop or start a component).
func (n *e2eNode) e2e(t *testing.T, args ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("bash", append([]string{filepath.Join(n.repo, "hack", "e2e.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "LOCUS_E2E_DIR="+n.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("e2e.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("e2e.sh %s: %s", strings.Join(args, " "), time.Since(start).Round(10*time.Millisecond))
}

// pid is the pid of a component hack/e2e-up.sh started; in chart mode the
// agent's is its container's process.
func (n *e2eNode) pid(t testing.TB, name string) int {
	t.Helper()
	if name == "agent" && n.mode == "chart" {
		return procs(t, n.containerCgroup(t, n.agentPod(t), "agent", "cpuset"))[0]
	}
	pid, err := strconv.Atoi(readFile(t, filepath.Join(n.dir, "pids", name)))
	if err != nil {
		t.Fatalf("pid of %s: %v", name, err)
	}
	return pid
}

func readFileErr(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// sandboxCgroup is the cgroup of the pod's sandbox (pause) container: the one
// container directory under the pod's that no container status names.
func (n *e2eNode) sandboxCgroup(t testing.TB, p *corev1.Pod, controller string) string {
	t.Helper()
	dir := n.podCgroup(t, p, controller)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, c := range p.Status.ContainerStatuses {
		named[strings.TrimPrefix(c.ContainerID, "containerd://")] = true
	}
	var found []string
	for _, e := range entries {
		if e.IsDir() && !named[e.Name()] {
			found = append(found, e.Name())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: want one sandbox cgroup besides the containers', found %v", dir, found)
	}
	return filepath.Join(dir, found[0])
}

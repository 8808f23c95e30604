package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// Scenario 6: Locus's own lifecycle through its chart, with a pinned, a shared and
// the seed's LS memory QoS pod running. `helm upgrade` to a second image tag
// replaces the agent's and the scheduler's pods and changes nothing on the node:
// same containers, files and allowed CPUs, no cgroup write by the new agent for
// the test's pods, and the same entries and originals for them in its state. `helm uninstall` puts every cgroup file
// Locus changed back to its original, deletes the node's NodeResourceTopology and
// leaves no object of the release. Locus is then installed again for the tests
// that follow.
func TestChartUpgradeKeepsEverythingAndUninstallRestoresTheNode(t *testing.T) {
	n := need(t)
	if n.mode != "chart" {
		t.Skip("Locus runs as host processes (LOCUS_E2E_MODE=host): no chart to upgrade")
	}
	n.sloConfig(t)
	ns := n.namespace(t, "chart")
	redis, pinned, shared, cpus := n.threePods(t, ns)
	pinnedDir := n.containerCgroup(t, pinned, "w", "cpuset")
	pods := []*corev1.Pod{redis, pinned, shared}
	kubetest.WaitFor(t, "the agent's state files", fileTimeout, func(context.Context) (bool, error) {
		for _, f := range []string{"checkpoint.json", "originals.json"} {
			if _, err := os.Stat(filepath.Join(n.dir, "agent", f)); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	want, state := n.snapshot(t, pods), n.podsState(t, ns, pods)

	// The upgrade: both images under a second tag, as a new release would be.
	old := n.agentPod(t)
	tag := strings.SplitN(old.Spec.Containers[0].Image, ":", 2)[1] + "-upgrade"
	for _, img := range []string{"locus", "locus-scheduler"} {
		ref := "ghcr.io/locus-project/" + img
		n.run(t, "ctr", "--address", n.containerd, "-n", "k8s.io", "images", "tag", "--force",
			ref+":"+strings.TrimSuffix(tag, "-upgrade"), ref+":"+tag)
	}
	upgrade := time.Now()
	n.helm(t, "upgrade", n.release, filepath.Join(n.repo, "deploy/helm/locus"), "--namespace", n.locusNS,
		"--reuse-values", "--set", "image.tag="+tag)
	// The old scheduler goes first (one node, one port): its successor is bound
	// as at install, the cluster having no other scheduler.
	n.run(t, "bash", filepath.Join(n.repo, "hack/e2e.sh"), "settle")
	kubetest.WaitFor(t, "the agent's pod of the new tag", podTimeout, func(context.Context) (bool, error) {
		p := n.agentPod(t)
		return p.UID != old.UID && strings.HasSuffix(p.Spec.Containers[0].Image, ":"+tag), nil
	})
	kubetest.WaitFor(t, "two reconciles of the new agent", fileTimeout, func(context.Context) (bool, error) {
		return n.metrics(t)["locus_reconcile_duration_seconds_count"] >= 2, nil
	})
	if got := n.snapshot(t, pods); got != want {
		t.Errorf("after the upgrade the node differs:\n got %s\nwant %s", got, want)
	}
	checkAllowed(t, pinnedDir, cpus.String())
	n.checkUntouched(t, "the upgrade", ns, pods, upgrade, state)

	// The uninstall.
	originals := n.originals(t)
	t.Cleanup(func() { n.run(t, "bash", filepath.Join(n.repo, "hack/e2e.sh"), "install") })
	n.helm(t, "uninstall", n.release, "--namespace", n.locusNS, "--wait", "--timeout", "2m")
	n.waitReleaseGone(t)
	restored := 0
	for key, orig := range originals {
		got, err := readFileErr(filepath.Join(cgroupRoot, key))
		if os.IsNotExist(err) {
			continue // the cgroup of a pod that ended
		}
		if err != nil || got != orig {
			t.Errorf("after uninstall %s = %q (%v), want its original %q", key, got, err, orig)
		}
		restored++
	}
	if restored < 3 {
		t.Errorf("only %d of the originals %v are of cgroups that exist: the test checked nothing", restored, originals)
	}
	checkAllowed(t, pinnedDir, "0-1")
	_, err := n.cp.Dynamic.Resource(nrt.GVR).Get(ctxT(t), n.name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the node's NodeResourceTopology after uninstall: %v, want not found", err)
	}
	if left := n.releaseObjects(t); len(left) > 0 {
		t.Errorf("objects of the release left after uninstall: %v", left)
	}
}

// checkUntouched checks that since then the agent wrote nothing for the pods of ns
// and keeps the same state about them. The agent's own pod (a new one after an
// upgrade, a new container after a restart) and the new scheduler's are new
// workloads, which it writes and records: its total of writes says nothing here.
func (n *e2eNode) checkUntouched(t *testing.T, what, ns string, pods []*corev1.Pod, since time.Time, state string) {
	t.Helper()
	changed := false
	for _, e := range n.agentEvents(t, ns) {
		if e.Time.After(since) && (e.Reason == "CPUsAssigned" || e.Reason == "CgroupUpdated" || e.Reason == "ProcessesMoved") {
			t.Errorf("after %s the agent changed %s: %s %s", what, e.Workload, e.Reason, e.Message)
			changed = true
		}
	}
	if changed {
		n.logAgentLines(t, ns+"/")
	}
	if got := n.podsState(t, ns, pods); got != state {
		t.Errorf("after %s the agent's state of the pods differs:\n got %s\nwant %s", what, got, state)
	}
}

// podsState is what the agent's checkpoint and originals hold about the pods of
// ns: their entries, and the originals of their cgroups' files.
func (n *e2eNode) podsState(t *testing.T, ns string, pods []*corev1.Pod) string {
	t.Helper()
	var ck map[string]map[string]json.RawMessage
	_ = json.Unmarshal([]byte(readFile(t, filepath.Join(n.dir, "agent", "checkpoint.json"))), &ck)
	var b strings.Builder
	for _, section := range []string{"assignments", "workloads"} {
		keys := make([]string, 0, len(ck[section]))
		for k := range ck[section] {
			if strings.HasPrefix(k, ns+"/") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %s=%s; ", section, k, ck[section][k])
		}
	}
	orig := n.originals(t)
	keys := make([]string, 0, len(orig))
	for k := range orig {
		for _, p := range pods {
			if strings.Contains(k, string(p.UID)) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "original %s=%s; ", k, orig[k])
	}
	if len(keys) == 0 {
		t.Fatalf("the agent records no originals of the pods of %s", ns)
	}
	return b.String()
}

// agentPod is the agent's running pod of the release.
func (n *e2eNode) agentPod(t testing.TB) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	kubetest.WaitFor(t, "the agent's pod to run", podTimeout, func(ctx context.Context) (bool, error) {
		l, err := n.cp.Client.CoreV1().Pods(n.locusNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=agent"})
		if err != nil {
			return false, err
		}
		for i, p := range l.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].State.Running != nil {
				pod = &l.Items[i]
				return true, nil
			}
		}
		return false, fmt.Errorf("%d agent pods, none running", len(l.Items))
	})
	return pod
}

// originals is the agent's record of the cgroup files' values before it wrote them.
func (n *e2eNode) originals(t *testing.T) map[string]string {
	t.Helper()
	var f struct {
		Originals map[string]string `json:"originals"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(n.dir, "agent", "originals.json"))), &f); err != nil {
		t.Fatal(err)
	}
	return f.Originals
}

// releaseObjects are the objects labelled as the release's that still exist.
func (n *e2eNode) releaseObjects(t *testing.T) []string {
	t.Helper()
	ctx, sel := ctxT(t), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + n.release}
	c := n.cp.Client
	var left []string
	for kind, list := range map[string]func() (runtime.Object, error){
		"DaemonSet":          func() (runtime.Object, error) { return c.AppsV1().DaemonSets("").List(ctx, sel) },
		"Deployment":         func() (runtime.Object, error) { return c.AppsV1().Deployments("").List(ctx, sel) },
		"ServiceAccount":     func() (runtime.Object, error) { return c.CoreV1().ServiceAccounts("").List(ctx, sel) },
		"ConfigMap":          func() (runtime.Object, error) { return c.CoreV1().ConfigMaps("").List(ctx, sel) },
		"Service":            func() (runtime.Object, error) { return c.CoreV1().Services("").List(ctx, sel) },
		"ClusterRole":        func() (runtime.Object, error) { return c.RbacV1().ClusterRoles().List(ctx, sel) },
		"ClusterRoleBinding": func() (runtime.Object, error) { return c.RbacV1().ClusterRoleBindings().List(ctx, sel) },
		"Role":               func() (runtime.Object, error) { return c.RbacV1().Roles("").List(ctx, sel) },
		"RoleBinding":        func() (runtime.Object, error) { return c.RbacV1().RoleBindings("").List(ctx, sel) },
	} {
		l, err := list()
		if err != nil {
			t.Fatalf("list %s: %v", kind, err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			o, _ := meta.Accessor(it)
			left = append(left, kind+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return left
}

func (n *e2eNode) helm(t *testing.T, args ...string) {
	t.Helper()
	n.run(t, "bash", append([]string{filepath.Join(n.repo, "hack/e2e.sh"), "helm"}, args...)...)
}

func (n *e2eNode) run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LOCUS_E2E_DIR="+n.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// logAgentLines logs the lines of the agents' logs on the node (the chart's
// pods', the host processes') that contain substr: what led to a failure is
// gone with the node's directory once the run ends.
func (n *e2eNode) logAgentLines(t *testing.T, substr string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(n.dir, "kubelet", "pod-logs", "*locus-agent*", "*", "*.log"))
	files = append(files, filepath.Join(n.dir, "logs", "agent.log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, substr) {
				t.Logf("%s: %s", filepath.Base(filepath.Dir(filepath.Dir(f))), line)
			}
		}
	}
}

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
)

// docCommands are the lines of the document's sh code blocks.
func docCommands(t *testing.T, doc string) []string {
	t.Helper()
	f, err := os.Open(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```sh":
			in = true
		case line == "```":
			in = false
		case in && line != "":
			out = append(out, line)
		}
	}
	return out
}

// Every command of docs/quickstart.md, run in its order by docs/quickstart.sh on
// this node, where the test's own release first makes way for the quick start's
// (with this node's values as ~/locus-values.yaml). The Redis runs the workload
// image under the name redis:7.2: no registry is reachable from here. Afterwards
// the test's release is installed again.
func TestQuickStart(t *testing.T) {
	n := need(t)
	if n.mode != "chart" {
		t.Skip("Locus runs as host processes (LOCUS_E2E_MODE=host): the quick start installs the chart")
	}
	script, err := os.ReadFile(filepath.Join(n.repo, "docs/quickstart.sh"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(script), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	cmds := docCommands(t, filepath.Join(n.repo, "docs/quickstart.md"))
	for _, c := range cmds {
		if !lines[c] {
			t.Errorf("docs/quickstart.md runs %q, which docs/quickstart.sh does not", c)
		}
	}
	if len(cmds) < 10 {
		t.Fatalf("docs/quickstart.md has %d commands: %q", len(cmds), cmds)
	}

	home := t.TempDir()
	values, err := os.ReadFile(filepath.Join(n.dir, "helm", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "locus-values.yaml"), values, 0o644); err != nil {
		t.Fatal(err)
	}
	helmBin := os.Getenv("LOCUS_HELM")
	if helmBin == "" {
		helmBin = filepath.Join(n.repo, ".cache/bin/helm")
	}
	// HOME is the quick start's (~/locus-values.yaml); Go keeps its caches.
	goEnv, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	g := strings.Fields(string(goEnv))
	env := append(os.Environ(), "GOPATH="+g[0], "GOMODCACHE="+g[1], "GOCACHE="+g[2], "HOME="+home, "KUBECONFIG="+n.cp.Kubeconfig, "CONTAINERD_ADDRESS="+n.containerd,
		"PATH="+filepath.Dir(n.cp.Binaries.Kubectl)+":"+filepath.Dir(helmBin)+":"+os.Getenv("PATH"))
	step := func(steps ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(n.repo, "docs/quickstart.sh"), steps...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("docs/quickstart.sh %s: %v\n%s", strings.Join(steps, " "), err, out.String())
		}
		return out.String()
	}

	n.helm(t, "uninstall", n.release, "--namespace", n.locusNS, "--wait", "--timeout", "2m")
	n.waitReleaseGone(t)
	t.Cleanup(func() {
		// The quick start's pod and release, if it failed half-way.
		_ = exec.Command("bash", filepath.Join(n.repo, "hack/e2e.sh"), "kubectl", "delete", "--ignore-not-found", "--wait",
			"-f", filepath.Join(n.repo, "docs/quickstart-redis.yaml")).Run()
		_ = exec.Command("bash", filepath.Join(n.repo, "hack/e2e.sh"), "helm", "uninstall", n.release,
			"--namespace", n.locusNS, "--wait").Run()
		n.waitReleaseGone(t)
		n.run(t, "bash", filepath.Join(n.repo, "hack/e2e.sh"), "install")
	})
	if runtime.GOARCH == "amd64" { // the document builds for amd64 nodes
		step("images")
	}
	step("load")
	// This cluster's only scheduler is the chart's, and its first pod needs binding.
	bind := exec.Command("bash", filepath.Join(n.repo, "hack/e2e.sh"), "bind-scheduler")
	bind.Env = append(os.Environ(), "LOCUS_E2E_DIR="+n.dir)
	if err := bind.Start(); err != nil {
		t.Fatal(err)
	}
	step("install")
	if err := bind.Wait(); err != nil {
		t.Fatalf("bind the scheduler: %v", err)
	}

	n.run(t, "ctr", "--address", n.containerd, "-n", "k8s.io", "images", "tag", "--force", n.image, "docker.io/library/redis:7.2")
	step("try")
	redis := n.waitRunning(t, "default", "redis")
	// On the pod network, as on any cluster: an address of its own, not the node's.
	if redis.Spec.HostNetwork || len(redis.Spec.Tolerations) > 2 || redis.Status.PodIP == "" || redis.Status.PodIP == redis.Status.HostIP {
		t.Errorf("redis: hostNetwork %v, %d tolerations, pod IP %q on host %q: want its own address on the pod network and only the default tolerations",
			redis.Spec.HostNetwork, len(redis.Spec.Tolerations), redis.Status.PodIP, redis.Status.HostIP)
	}
	cpus := waitCPUs(t, n.containerCgroup(t, redis, "redis", "cpuset"), 1)
	kubetest.WaitFor(t, "the CPUsAssigned event on the redis pod", fileTimeout, func(ctx context.Context) (bool, error) {
		l, err := n.cp.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=redis"})
		if err != nil {
			return false, err
		}
		for _, e := range l.Items {
			if e.Reason == "CPUsAssigned" && e.Type == corev1.EventTypeNormal {
				return true, nil
			}
		}
		return false, nil
	})
	out := step("check")
	if !strings.Contains(out, n.name) || !strings.Contains(out, "default/redis") {
		t.Errorf("the check lists no NodeResourceTopology of %s or no default/redis in locus status:\n%s", n.name, out)
	}
	t.Logf("redis on CPUs %s; locus status:\n%s", cpus, out)
	step("dashboard")
	if _, err := n.cp.Client.CoreV1().ConfigMaps(n.locusNS).Get(ctxT(t), "locus-grafana-dashboard", metav1.GetOptions{}); err != nil {
		t.Errorf("the dashboard's ConfigMap: %v", err)
	}
	step("cleanup")
	n.waitReleaseGone(t)
}

// waitReleaseGone waits until no pod of the release is left.
func (n *e2eNode) waitReleaseGone(t *testing.T) {
	t.Helper()
	kubetest.WaitFor(t, "the release's pods to be gone", podTimeout, func(ctx context.Context) (bool, error) {
		l, err := n.cp.Client.CoreV1().Pods(n.locusNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + n.release})
		return err == nil && len(l.Items) == 0, err
	})
}

package kubetest_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/kubetest"
)

// agentArgs renders the DaemonSet with the given --set values and returns
// the agent container's arguments.
func agentArgs(t *testing.T, set ...string) []string {
	t.Helper()
	chart := kubetest.RepoPath(t, chartDir)
	out := helm(t, "", append([]string{"template", "locus", chart, "--show-only", "templates/daemonset.yaml"}, setFlags(set)...)...)
	var ds struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name string   `json:"name"`
						Args []string `json:"args"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("rendered DaemonSet: %v\n%s", err, out)
	}
	for _, c := range ds.Spec.Template.Spec.Containers {
		if c.Name == "agent" {
			return c.Args
		}
	}
	t.Fatalf("rendered DaemonSet has no agent container:\n%s", out)
	return nil
}

// The agent's Kubernetes-mode flags appear exactly when their values are set;
// empty values leave the agent's own defaults (no reserved CPUs, driver
// auto-detection).
func TestHelmChartAgentFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     []string
		want    []string
		wantNot []string
	}{
		{name: "defaults", want: []string{"--kubelet-dir=/host/kubelet", "--nri-socket=/host/nri/nri.sock"}, wantNot: []string{"--reserved-cpus", "--cgroup-driver", "--kubelet-cgroup-root", "--nri=false", "--nri-fail-closed"}},
		{name: "no kubelet dir", set: []string{"agent.kubeletDir="}, want: []string{"--kubelet-dir="}, wantNot: []string{"--kubelet-dir=/"}},
		{name: "nri off", set: []string{"agent.nri.enabled=false"}, want: []string{"--nri=false"}, wantNot: []string{"--nri-socket"}},
		{name: "nri fail closed", set: []string{"agent.nri.failClosed=true", "agent.nri.socket=/run/crio/nri.sock"}, want: []string{"--nri-socket=/host/nri/nri.sock", "--nri-fail-closed"}},
		{name: "kubelet root", set: []string{"agent.kubeletCgroupRoot=/kubelet"}, want: []string{"--kubelet-cgroup-root=/kubelet"}},
		{name: "reserved", set: []string{`agent.reservedCPUs=0\,64`}, want: []string{"--reserved-cpus=0,64"}, wantNot: []string{"--cgroup-driver"}},
		{name: "driver", set: []string{"agent.cgroupDriver=systemd"}, want: []string{"--cgroup-driver=systemd"}, wantNot: []string{"--reserved-cpus"}},
		{name: "both", set: []string{"agent.reservedCPUs=0-1", "agent.cgroupDriver=cgroupfs"}, want: []string{"--reserved-cpus=0-1", "--cgroup-driver=cgroupfs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := agentArgs(t, tc.set...)
			for _, w := range tc.want {
				if !slices.Contains(args, w) {
					t.Errorf("args %q: missing %q", args, w)
				}
			}
			for _, flag := range tc.wantNot {
				if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, flag) }) {
					t.Errorf("args %q: want no %s", args, flag)
				}
			}
		})
	}
}

// A kubelet cgroup root that is not a plain cgroup path fails the install,
// naming the value, before the agent would refuse it in a crash loop.
func TestHelmChartKubeletRootRefused(t *testing.T) {
	chart := kubetest.RepoPath(t, chartDir)
	for _, bad := range []string{"/kubelet/..", "/../x", "/a//b", "/a b", "/./a"} {
		out, err := helmRun(t, append([]string{"template", "locus", chart, "--show-only", "templates/daemonset.yaml"},
			setFlags([]string{"agent.kubeletCgroupRoot=" + bad})...)...)
		// The schema refuses some ("/agent/kubeletCgroupRoot"), the
		// template the rest ("agent.kubeletCgroupRoot"): both name it.
		if err == nil || !strings.Contains(out, "kubeletCgroupRoot") {
			t.Errorf("kubeletCgroupRoot %q: err %v, output %s", bad, err, out)
		}
	}
}

// helmRun runs helm and returns its combined output and error, for
// renders that must fail.
func helmRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("LOCUS_HELM")
	if bin == "" {
		bin = kubetest.RepoPath(t, ".cache/bin/helm")
	}
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

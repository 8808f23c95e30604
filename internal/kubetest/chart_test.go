package kubetest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// The chart is tested here, against the harness's real apiserver, because this is
// where a real apiserver is at hand.

const chartDir = "deploy/helm/locus"

// chartValueSets are the configurations every chart check covers.
var chartValueSets = []struct {
	name string
	set  []string
}{
	{name: "defaults"},
	{name: "scheduler-privileged", set: []string{"scheduler.enabled=true", "agent.privileged=true", "image.pullPolicy=Always"}},
	{name: "no-network-policy", set: []string{"networkPolicy.enabled=false", "agent.seccompProfile.type=RuntimeDefault"}},
	{name: "slo-config-adopt", set: []string{"sloConfig.manage=adopt"}},
	{name: "namespace-on-delete", set: []string{"namespace.create=true", "agent.updateStrategy.type=OnDelete", "metrics.service.enabled=false"}},
	{name: "grafana-dashboard", set: []string{"grafana.dashboard.enabled=true"}},
	{name: "agent-flags", set: []string{`agent.reservedCPUs=0\,64`, "agent.cgroupDriver=systemd"}},
	{name: "scheduler-host-network", set: []string{"scheduler.enabled=true", "agent.hostNetwork=true", "scheduler.hostNetwork=true",
		"apiServer.host=10.0.0.10", "apiServer.port=6443"}},
}

// helm runs the pinned helm (hack/helm-check.sh installs it) with its state in a
// temporary directory and, when kubeconfig is set, against that cluster.
func helm(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	bin := os.Getenv("LOCUS_HELM")
	if bin == "" {
		bin = kubetest.RepoPath(t, ".cache/bin/helm")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm not found at %s: install it with hack/helm-check.sh --install-only (or set LOCUS_HELM)", bin)
	}
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home,
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func setFlags(set []string) []string {
	var args []string
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return args
}

func TestHelmChartLints(t *testing.T) {
	chart := kubetest.RepoPath(t, chartDir)
	for _, vs := range chartValueSets {
		t.Run(vs.name, func(t *testing.T) {
			out := helm(t, "", append([]string{"lint", "--strict", chart}, setFlags(vs.set)...)...)
			if !strings.Contains(out, "0 chart(s) failed") {
				t.Fatalf("helm lint:\n%s", out)
			}
		})
	}
}

// Everything the chart renders is accepted by a real apiserver (admission and
// validation included, privileged pods allowed), and its default configuration
// parses with the agent's own parsers.
func TestHelmChartAppliesToRealAPIServer(t *testing.T) {
	chart := kubetest.RepoPath(t, chartDir)
	ns := cp.CreateNamespace(t, "chart")
	for _, vs := range chartValueSets {
		t.Run(vs.name, func(t *testing.T) {
			rendered := helm(t, "", append([]string{"template", "locus", chart, "--namespace", ns, "--include-crds"}, setFlags(vs.set)...)...)
			objs, err := kubetest.DecodeYAML([]byte(rendered))
			if err != nil {
				t.Fatalf("rendered chart: %v", err)
			}
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				checkDefaultConfig(t, o.GetKind(), o.GetName(), o.Object)
			}
			wantDeployments, wantConfigMaps := 0, 0
			if strings.Contains(vs.name, "scheduler") {
				wantDeployments = 1
				wantConfigMaps++ // its KubeSchedulerConfiguration
			}
			if vs.name == "slo-config-adopt" {
				wantConfigMaps = 2 // ack-slo-config and ack-slo-pod-config
			}
			if vs.name == "grafana-dashboard" {
				wantConfigMaps++ // the dashboard, for Grafana's sidecar
			}
			wantPolicies := 1
			if vs.name == "no-network-policy" {
				wantPolicies = 0
			}
			if kinds["DaemonSet"] != 1 || kinds["CustomResourceDefinition"] != 1 ||
				kinds["Deployment"] != wantDeployments || kinds["ConfigMap"] != wantConfigMaps ||
				kinds["ValidatingAdmissionPolicy"] != 1 || kinds["ValidatingAdmissionPolicyBinding"] != 1 || kinds["NetworkPolicy"] != wantPolicies {
				t.Fatalf("rendered kinds %v: want 1 DaemonSet, 1 CRD, %d Deployment(s), %d ConfigMap(s), the admission policy and its binding, %d NetworkPolicy",
					kinds, wantDeployments, wantConfigMaps, wantPolicies)
			}

			apply := cp.Kubectl("apply", "--dry-run=server", "-f", "-")
			apply.Stdin = strings.NewReader(rendered)
			out, err := apply.CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
			}
			if n := strings.Count(string(out), "(server dry run)"); n != len(objs) {
				t.Fatalf("server dry run accepted %d of %d objects:\n%s", n, len(objs), out)
			}
		})
	}
}

// checkDefaultConfig parses the chart's default ConfigMaps the way the agent does.
func checkDefaultConfig(t *testing.T, kind, name string, obj map[string]any) {
	t.Helper()
	if kind != "ConfigMap" {
		return
	}
	raw, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	switch name {
	case "ack-slo-config":
		rq, err := sloconfig.ParseResourceQoS(cm.Data[sloconfig.ConfigKeyResourceQoS])
		if err != nil {
			t.Fatalf("chart's %s: %v", name, err)
		}
		if cfg := rq.Cluster.MemQoS; cfg.LS == nil || cfg.BE == nil {
			t.Fatalf("chart's %s sets no lsClass/beClass memoryQOS: %+v", name, rq.Cluster.MemQoS)
		}
	case "ack-slo-pod-config":
		if _, err := sloconfig.ParseNamespaces(cm.Data[sloconfig.ConfigKeyNamespaces]); err != nil {
			t.Fatalf("chart's %s: %v", name, err)
		}
	case "locus-scheduler-config":
		// Loaded and run by pkg/scheduler/integration; here, only that it is one.
		if !strings.Contains(cm.Data["config.yaml"], "kind: KubeSchedulerConfiguration") {
			t.Fatalf("chart's %s holds no KubeSchedulerConfiguration:\n%s", name, cm.Data["config.yaml"])
		}
	case "locus-grafana-dashboard":
		// Its queries are checked against a live /metrics in pkg/agent; here,
		// that Grafana's sidecar finds it and it is JSON.
		var labels struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(raw, &labels); err != nil || labels.Metadata.Labels["grafana_dashboard"] != "1" {
			t.Fatalf("chart's %s lacks the label grafana_dashboard: \"1\" (%v)", name, err)
		}
		for key, text := range cm.Data {
			if !json.Valid([]byte(text)) {
				t.Fatalf("chart's %s: %s is not JSON", name, key)
			}
		}
	default:
		t.Fatalf("unexpected ConfigMap %s in the chart", name)
	}
}

package kubetest_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/decisionsig"
)

// The decision key: the chart's Secret holds a key file the agents and the
// scheduler accept, mounted as a file into both, named by the agent's
// --decision-key-file and the plugin's decisionKeyFile; with
// decisionKey.existingSecret the chart renders no Secret and mounts that one.
func TestHelmChartDecisionKeyRendered(t *testing.T) {
	chart := kubetest.RepoPath(t, chartDir)
	for _, tc := range []struct {
		name, secret string
		set          []string
	}{
		{name: "the chart's", secret: "locus-decision-key", set: []string{"scheduler.enabled=true"}},
		{name: "the user's", secret: "my-key", set: []string{"scheduler.enabled=true", "decisionKey.existingSecret=my-key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := kubetest.DecodeYAML([]byte(helm(t, "", append([]string{"template", "locus", chart}, setFlags(tc.set)...)...)))
			if err != nil {
				t.Fatal(err)
			}
			secrets, mounts := 0, 0
			for _, o := range objs {
				raw, _ := yaml.Marshal(o.Object)
				switch o.GetKind() {
				case "Secret":
					secrets++
					var s corev1.Secret
					if err := yaml.Unmarshal(raw, &s); err != nil {
						t.Fatal(err)
					}
					checkKeyFile(t, s.Data["keys"])
					if s.Annotations["helm.sh/resource-policy"] != "keep" {
						t.Errorf("Secret %s without helm.sh/resource-policy: keep", s.Name)
					}
				case "DaemonSet", "Deployment":
					if !strings.Contains(string(raw), "secretName: "+tc.secret) || !strings.Contains(string(raw), "mountPath: /etc/locus/decision-key") {
						t.Errorf("%s %s mounts no Secret %s:\n%s", o.GetKind(), o.GetName(), tc.secret, raw)
					}
					mounts++
				case "ConfigMap":
					if strings.HasSuffix(o.GetName(), "-scheduler-config") && !strings.Contains(string(raw), "decisionKeyFile: /etc/locus/decision-key/keys") {
						t.Errorf("the scheduler's configuration names no decisionKeyFile:\n%s", raw)
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.secret == "locus-decision-key"]; secrets != want || mounts != 2 {
				t.Errorf("%d Secrets (want %d), %d workloads mounting it (want 2)", secrets, want, mounts)
			}
			if args := agentArgs(t, tc.set...); !strings.Contains(strings.Join(args, " "), "--decision-key-file=/etc/locus/decision-key/keys") {
				t.Errorf("agent args %q: no --decision-key-file", args)
			}
		})
	}
}

// checkKeyFile fails t unless raw is a key file the agents and the
// scheduler read.
func checkKeyFile(t *testing.T, raw []byte) *decisionsig.Keys {
	t.Helper()
	keys, err := decisionsig.ParseKeys(raw)
	if err != nil {
		t.Fatalf("the chart's key file: %v", err)
	}
	return keys
}

// Installed on a real apiserver, the chart's key survives an upgrade (the
// same key, not a new random one: pods placed before still verify) and an
// uninstall.
func TestHelmChartDecisionKeyKept(t *testing.T) {
	own := kubetest.Start(t)
	chart := kubetest.RepoPath(t, chartDir)
	ctx := ctxFor(t)
	const ns = "locus-keys"
	if _, err := own.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := func(stage string) string {
		t.Helper()
		s, err := own.Client.CoreV1().Secrets(ns).Get(ctx, "locus-decision-key", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		checkKeyFile(t, s.Data["keys"])
		return string(s.Data["keys"])
	}
	helm(t, own.Kubeconfig, "install", "locus", chart, "--namespace", ns, "--set", "scheduler.enabled=true")
	installed := key("after install")
	helm(t, own.Kubeconfig, "upgrade", "locus", chart, "--namespace", ns, "--set", "scheduler.enabled=true")
	if key("after upgrade") != installed {
		t.Fatal("the upgrade changed the decision key")
	}
	helm(t, own.Kubeconfig, "uninstall", "locus", "--namespace", ns, "--no-hooks")
	if key("after uninstall") != installed {
		t.Fatal("the uninstall changed the decision key")
	}
	helm(t, own.Kubeconfig, "install", "locus", chart, "--namespace", ns, "--set", "scheduler.enabled=true")
	if key("after a new install") != installed {
		t.Fatal("a new install replaced the kept decision key")
	}
}

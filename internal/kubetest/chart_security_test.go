package kubetest_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/kubetest"
)

// renderKind renders the chart with set and decodes every object of kind
// into a new T.
func renderKind[T any](t *testing.T, kind string, set ...string) []T {
	t.Helper()
	out := helm(t, "", append([]string{"template", "locus", kubetest.RepoPath(t, chartDir), "--namespace", "locus-system"}, setFlags(set)...)...)
	objs, err := kubetest.DecodeYAML([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []T
	for _, o := range objs {
		if o.GetKind() != kind {
			continue
		}
		raw, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		var v T
		if err := yaml.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	return got
}

func agentContainer(t *testing.T, set ...string) (corev1.PodSpec, corev1.Container) {
	t.Helper()
	dss := renderKind[appsv1.DaemonSet](t, "DaemonSet", set...)
	if len(dss) != 1 {
		t.Fatalf("%d DaemonSets rendered", len(dss))
	}
	spec := dss[0].Spec.Template.Spec
	for _, c := range spec.Containers {
		if c.Name == "agent" {
			return spec, c
		}
	}
	t.Fatal("no agent container")
	return spec, corev1.Container{}
}

// By default the agent is not privileged: root with every capability
// dropped but SYS_NICE and SYS_PTRACE, no privilege escalation, a read-only
// root filesystem; privileged: true still gives it everything.
func TestHelmChartAgentLeastPrivilegeByDefault(t *testing.T) {
	spec, c := agentContainer(t)
	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Fatalf("agent security context %+v: want root, not privileged, no escalation, read-only root", sc)
	}
	if caps := sc.Capabilities; caps == nil || !slices.Equal(caps.Drop, []corev1.Capability{"ALL"}) ||
		!slices.Equal(caps.Add, []corev1.Capability{"SYS_NICE", "SYS_PTRACE"}) {
		t.Errorf("agent capabilities %+v: want all dropped but SYS_NICE and SYS_PTRACE", caps)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeUnconfined {
		t.Errorf("agent seccomp profile %+v: move_pages and migrate_pages are outside RuntimeDefault", sc.SeccompProfile)
	}
	if !spec.HostPID || spec.HostNetwork {
		t.Errorf("agent hostPID %v, hostNetwork %v: want hostPID only", spec.HostPID, spec.HostNetwork)
	}
	_, c = agentContainer(t, "agent.privileged=true")
	if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("agent.privileged=true: %+v", sc)
	}
}

// /status and /ui are served on the pod's loopback only, /metrics and
// /healthz (the probe's) on its IP; a NetworkPolicy lets in only the
// metrics port, from the peers given or anyone.
func TestHelmChartAgentListenersAndNetworkPolicy(t *testing.T) {
	_, c := agentContainer(t)
	for _, want := range []string{"--metrics-addr=[$(POD_IP)]:19316", "--status-addr=127.0.0.1:19316"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("agent args %q: missing %s", c.Args, want)
		}
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP"
	}) {
		t.Errorf("agent env %+v: no POD_IP from status.podIP", c.Env)
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "metrics" || p.HTTPGet.Host != "" {
		t.Errorf("liveness probe %+v: want /healthz on the metrics port of the pod's IP", p)
	}

	nps := renderKind[networkingv1.NetworkPolicy](t, "NetworkPolicy")
	if len(nps) != 1 {
		t.Fatalf("%d NetworkPolicies rendered, want the agents'", len(nps))
	}
	np := nps[0].Spec
	if np.PodSelector.MatchLabels["app.kubernetes.io/component"] != "agent" || !slices.Equal(np.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) ||
		len(np.Ingress) != 1 || len(np.Ingress[0].Ports) != 1 || np.Ingress[0].Ports[0].Port.IntValue() != 19316 || len(np.Ingress[0].From) != 0 {
		t.Errorf("NetworkPolicy %+v: want ingress to the agents' port 19316 only", np)
	}
	nps = renderKind[networkingv1.NetworkPolicy](t, "NetworkPolicy", `networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring`)
	if from := nps[0].Spec.Ingress[0].From; len(from) != 1 || from[0].NamespaceSelector.MatchLabels["name"] != "monitoring" {
		t.Errorf("metricsFrom: %+v", from)
	}
	if n := len(renderKind[networkingv1.NetworkPolicy](t, "NetworkPolicy", "networkPolicy.enabled=false")); n != 0 {
		t.Errorf("networkPolicy.enabled=false rendered %d", n)
	}
}

// The scheduler's own ClusterRole adds to kube-scheduler's only reading
// the reports: its Bind runs first and carries the decision on the
// Binding, so it patches no pod.
func TestHelmChartSchedulerWritesNoPod(t *testing.T) {
	for _, cr := range renderKind[rbacv1.ClusterRole](t, "ClusterRole", "scheduler.enabled=true") {
		if !strings.HasSuffix(cr.Name, "-scheduler") {
			continue
		}
		for _, r := range cr.Rules {
			if slices.Contains(r.Resources, "pods") {
				t.Errorf("scheduler ClusterRole %s: %+v on pods", cr.Name, r)
			}
			if slices.ContainsFunc(r.Verbs, func(v string) bool { return !slices.Contains([]string{"get", "list", "watch"}, v) }) {
				t.Errorf("scheduler ClusterRole %s writes: %+v", cr.Name, r)
			}
		}
	}
	var cfg struct {
		Profiles []struct {
			Plugins struct {
				Bind struct {
					Enabled []struct{ Name string } `json:"enabled"`
				} `json:"bind"`
			} `json:"plugins"`
		} `json:"profiles"`
	}
	for _, cm := range renderKind[corev1.ConfigMap](t, "ConfigMap", "scheduler.enabled=true") {
		if cm.Name == "locus-scheduler-config" {
			if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(cfg.Profiles) != 1 || len(cfg.Profiles[0].Plugins.Bind.Enabled) == 0 || cfg.Profiles[0].Plugins.Bind.Enabled[0].Name != "LocusCPUTopology" {
		t.Errorf("the scheduler's configuration does not bind with the plugin first: %+v", cfg)
	}
}

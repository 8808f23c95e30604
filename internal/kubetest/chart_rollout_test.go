package kubetest_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// A rollout waits for each new agent to have reconciled its node: a
// readiness probe on /readyz (the metrics port, which the probe reaches on the
// pod's IP) and minReadySeconds. The update strategy is the user's to choose.
func TestHelmChartRolloutGatedOnReadiness(t *testing.T) {
	_, c := agentContainer(t)
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.String() != "metrics" {
		t.Errorf("readiness probe %+v: want /readyz on the metrics port", p)
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v: want /healthz", p)
	}
	for _, tc := range []struct {
		set  []string
		want func(appsv1.DaemonSetSpec) bool
	}{
		{nil, func(s appsv1.DaemonSetSpec) bool {
			return s.MinReadySeconds > 0 && s.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType &&
				s.UpdateStrategy.RollingUpdate.MaxUnavailable.String() == "1"
		}},
		{[]string{"agent.updateStrategy.rollingUpdate.maxUnavailable=10%", "agent.minReadySeconds=30"}, func(s appsv1.DaemonSetSpec) bool {
			return s.MinReadySeconds == 30 && s.UpdateStrategy.RollingUpdate.MaxUnavailable.String() == "10%"
		}},
		{[]string{"agent.updateStrategy.type=OnDelete"}, func(s appsv1.DaemonSetSpec) bool {
			return s.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType && s.UpdateStrategy.RollingUpdate == nil
		}},
	} {
		dss := renderKind[appsv1.DaemonSet](t, "DaemonSet", tc.set...)
		if len(dss) != 1 || !tc.want(dss[0].Spec) {
			t.Errorf("--set %v: DaemonSet minReadySeconds %d, updateStrategy %+v", tc.set, dss[0].Spec.MinReadySeconds, dss[0].Spec.UpdateStrategy)
		}
	}
}

// The agent needs Pod Security's privileged level (hostPID, hostPath): the
// chart makes its namespace, so labelled, when asked to (helm's
// --create-namespace cannot label one), and keeps it on uninstall.
func TestHelmChartNamespaceLabelledForPodSecurity(t *testing.T) {
	if n := len(renderKind[corev1.Namespace](t, "Namespace")); n != 0 {
		t.Fatalf("%d Namespaces rendered by default", n)
	}
	nss := renderKind[corev1.Namespace](t, "Namespace", "namespace.create=true", "namespace.labels.team=platform")
	if len(nss) != 1 {
		t.Fatalf("namespace.create=true: %d Namespaces", len(nss))
	}
	ns := nss[0]
	if ns.Name != "locus-system" || ns.Annotations["helm.sh/resource-policy"] != "keep" || ns.Labels["team"] != "platform" {
		t.Errorf("Namespace %s: labels %v, annotations %v", ns.Name, ns.Labels, ns.Annotations)
	}
	for _, mode := range []string{"enforce", "audit", "warn"} {
		if got := ns.Labels["pod-security.kubernetes.io/"+mode]; got != "privileged" {
			t.Errorf("pod-security.kubernetes.io/%s = %q, want privileged", mode, got)
		}
	}
}

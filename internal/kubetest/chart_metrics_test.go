package kubetest_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/locus-project/locus/internal/kubetest"
)

// monitor is what a ServiceMonitor's endpoint or a PodMonitor's
// podMetricsEndpoint holds that the checks below read.
type monitor struct {
	Metadata struct{ Name, Namespace string }
	Spec     struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		}
		Endpoints           []endpoint `json:"endpoints"`
		PodMetricsEndpoints []endpoint `json:"podMetricsEndpoints"`
	}
}

type endpoint struct {
	Port        string
	HonorLabels bool `json:"honorLabels"`
	Relabelings []struct {
		SourceLabels []string `json:"sourceLabels"`
		TargetLabel  string   `json:"targetLabel"`
		Replacement  string
		Action       string
		Regex        string
	}
}

// relabelled says what an endpoint's relabelings do: the label the pod's node
// name goes to, the fixed job, and the labels dropped.
func relabelled(e endpoint) (node, job string, dropped []string) {
	for _, r := range e.Relabelings {
		switch {
		case r.Action == "labeldrop":
			dropped = append(dropped, r.Regex)
		case len(r.SourceLabels) == 1 && r.SourceLabels[0] == "__meta_kubernetes_pod_node_name":
			node = r.TargetLabel
		case r.TargetLabel == "job":
			job = r.Replacement
		}
	}
	return node, job, dropped
}

// Prometheus finds the agents through a headless Service over the port the
// NetworkPolicy admits and, when asked for, a ServiceMonitor or PodMonitor that
// label every series with its node, keep the workload series' namespace and
// pod (honorLabels) and drop the target's container label; the alerting rules
// select the job those monitors set. None of the operator's kinds is rendered
// unless enabled: their CRDs may not exist.
func TestHelmChartMetricsServiceAndMonitors(t *testing.T) {
	svcs := renderKind[corev1.Service](t, "Service")
	if len(svcs) != 1 {
		t.Fatalf("%d Services rendered, want the agents' metrics Service", len(svcs))
	}
	svc := svcs[0]
	np := renderKind[networkingv1.NetworkPolicy](t, "NetworkPolicy")[0].Spec
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector["app.kubernetes.io/component"] != "agent" ||
		len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" ||
		svc.Spec.Ports[0].Port != np.Ingress[0].Ports[0].Port.IntVal {
		t.Errorf("metrics Service %+v: want headless, over the agents' metrics port %v", svc.Spec, np.Ingress[0].Ports[0].Port)
	}
	for _, kind := range []string{"ServiceMonitor", "PodMonitor", "PrometheusRule"} {
		if n := len(renderKind[map[string]any](t, kind)); n != 0 {
			t.Errorf("%d %s rendered by default", n, kind)
		}
	}
	if n := len(renderKind[corev1.Service](t, "Service", "metrics.service.enabled=false")); n != 0 {
		t.Errorf("metrics.service.enabled=false: %d Services", n)
	}

	on := []string{"metrics.serviceMonitor.enabled=true", "metrics.podMonitor.enabled=true", "metrics.prometheusRule.enabled=true",
		"metrics.serviceMonitor.labels.release=kube-prometheus-stack"}
	sms := renderKind[monitor](t, "ServiceMonitor", on...)
	pms := renderKind[monitor](t, "PodMonitor", on...)
	if len(sms) != 1 || len(pms) != 1 || len(sms[0].Spec.Endpoints) != 1 || len(pms[0].Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("ServiceMonitors %+v, PodMonitors %+v", sms, pms)
	}
	for k, v := range sms[0].Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, the Service has %q", k, v, svc.Labels[k])
		}
	}
	var jobs []string
	for kind, e := range map[string]endpoint{"ServiceMonitor": sms[0].Spec.Endpoints[0], "PodMonitor": pms[0].Spec.PodMetricsEndpoints[0]} {
		node, job, dropped := relabelled(e)
		if e.Port != "metrics" || !e.HonorLabels || node != "node" || job == "" || fmt.Sprint(dropped) != "[container]" {
			t.Errorf("%s endpoint %+v: want port metrics, honorLabels, node from the pod's node, a job, the container label dropped", kind, e)
		}
		jobs = append(jobs, job)
	}
	rules := helm(t, "", append([]string{"template", "locus", kubetest.RepoPath(t, chartDir), "--show-only", "templates/prometheusrule.yaml"}, setFlags(on)...)...)
	for _, alert := range []string{"LocusAgentDown", "LocusReconcileFailing", "LocusReconcileSlow", "LocusConfigInvalid",
		"LocusContainerCreationRefused", "LocusNRIFallback", "LocusHostCheckFailing"} {
		if !strings.Contains(rules, "alert: "+alert+"\n") {
			t.Errorf("no %s alert in\n%s", alert, rules)
		}
	}
	// Each metric the rules ask for is one the agent exports: docs/agent.md's
	// table lists them all (pkg/agent's TestMetricsScrapeParsesAndLints holds
	// it to a live /metrics).
	doc, err := os.ReadFile(kubetest.RepoPath(t, "docs/agent.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`\blocus_[a-z0-9_]+`).FindAllString(rules, -1) {
		base := strings.TrimSuffix(name, "_bucket")
		if !strings.Contains(string(doc), "| `"+base+"` |") {
			t.Errorf("the rules ask for %s, which docs/agent.md does not list among the agent's metrics", name)
		}
	}
	if jobs[0] != jobs[1] || !strings.Contains(rules, `up{job="`+jobs[0]+`"}`) {
		t.Errorf("monitors' jobs %v; the rules select another:\n%s", jobs, rules)
	}
	if !strings.Contains(rules, "{{ $labels.node }}") {
		t.Errorf("alert annotations do not name the node:\n%s", rules)
	}
}

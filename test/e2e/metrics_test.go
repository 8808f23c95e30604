package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
)

// The chart's agent turns ready once it has reconciled the node (/readyz, its
// readiness probe), and its /metrics, parsed by Prometheus' own text parser,
// names its build and labels each pod's series with the pod's namespace and
// name, as kube-state-metrics does.
func TestAgentReadyAndMetricsJoin(t *testing.T) {
	n := need(t)
	if n.mode == "chart" {
		pod := n.agentPod(t)
		ready := false
		for _, c := range pod.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		if !ready || pod.Spec.Containers[0].ReadinessProbe == nil {
			t.Errorf("the agent's pod: ready %v, readiness probe %+v", ready, pod.Spec.Containers[0].ReadinessProbe)
		}
	}
	for path, want := range map[string]int{"/readyz": http.StatusOK, "/healthz": http.StatusOK} {
		resp, err := http.Get("http://" + n.agentMetrics + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s answered %d, want %d", path, resp.StatusCode, want)
		}
	}
	resp, err := http.Get("http://" + n.agentMetrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("Prometheus' text parser: %v", err)
	}
	if b := families["locus_build_info"]; b == nil || len(b.GetMetric()) != 1 {
		t.Errorf("locus_build_info: %v", b)
	}
	pods := 0
	for _, m := range families["locus_workload_cpus"].GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		ns, name, ok := strings.Cut(l["workload"], "/")
		if !ok {
			continue // a host workload
		}
		pods++
		if l["namespace"] != ns || l["pod"] != name || l["container"] != "" {
			t.Errorf("locus_workload_cpus%v: want namespace %q, pod %q, no container", l, ns, name)
		}
	}
	if pods == 0 {
		t.Errorf("no pod's locus_workload_cpus series (the release's own pods run here): %v", families["locus_workload_cpus"])
	}
}

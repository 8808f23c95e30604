package publish

import (
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/locus-project/locus/pkg/status"
)

// labelsOf is a series' labels as a map, leaving out the empty ones: to
// Prometheus a label with an empty value is no label.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		if l.GetValue() != "" {
			out[l.GetName()] = l.GetValue()
		}
	}
	return out
}

// gathered is every series of m by metric name.
func gathered(t *testing.T, m *Metrics) map[string][]*dto.Metric {
	t.Helper()
	mfs, err := m.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	out := map[string][]*dto.Metric{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf.GetMetric()
	}
	return out
}

// A pod's series carry its namespace and pod name, which join with
// kube-state-metrics, and no container label; a host workload's carry
// neither. Percentages are ratios from 0 to 1, and memory.wmark_min_adj, an
// adjustment, is a metric of its own. Every series passes promlint, the
// checks of `promtool check metrics`.
func TestWorkloadSeriesJoinWithKubeStateMetrics(t *testing.T) {
	m := NewMetrics("0.2.0", "abc1234")
	m.SetWorkloads([]status.WorkloadStatus{
		{Name: "team-a/redis-0", Source: "pod", Pool: "exclusive", CPUs: "2-3", NUMANodes: []int{0},
			MemoryQOS: status.MemQoSStatus{Values: map[string]string{"memory.low": "1048576", "memory.wmark_ratio": "95",
				"memory.wmark_min_adj": "-25", "memory.high": "max"}}},
		{Name: "batch", Source: "command", Pool: "be", CPUs: "0-1", NUMANodes: []int{0, 1}},
	})
	series := gathered(t, m)
	want := map[string]struct {
		labels map[string]string
		value  float64
	}{
		"locus_workload_cpus/team-a/redis-0": {map[string]string{"workload": "team-a/redis-0", "namespace": "team-a", "pod": "redis-0", "pool": "exclusive"}, 2},
		"locus_workload_cpus/batch":          {map[string]string{"workload": "batch", "pool": "be"}, 2},
		"locus_workload_numa_nodes/batch":    {map[string]string{"workload": "batch"}, 2},
		"locus_workload_memory_qos_bytes/team-a/redis-0": {map[string]string{"workload": "team-a/redis-0", "namespace": "team-a", "pod": "redis-0",
			"knob": "memory.low"}, 1048576},
		"locus_workload_memory_qos_ratio/team-a/redis-0": {map[string]string{"workload": "team-a/redis-0", "namespace": "team-a", "pod": "redis-0",
			"knob": "memory.wmark_ratio"}, 0.95},
		"locus_workload_memory_wmark_min_adj/team-a/redis-0": {map[string]string{"workload": "team-a/redis-0", "namespace": "team-a", "pod": "redis-0"}, -25},
	}
	for key, w := range want {
		name, workload, _ := strings.Cut(key, "/")
		found := false
		for _, s := range series[name] {
			got := labelsOf(s)
			if got["workload"] != workload {
				continue
			}
			found = true
			if len(got) != len(w.labels) {
				t.Errorf("%s: labels %v, want %v", key, got, w.labels)
			}
			for k, v := range w.labels {
				if got[k] != v {
					t.Errorf("%s: label %s=%q, want %q (all: %v)", key, k, got[k], v, got)
				}
			}
			if v := s.GetGauge().GetValue(); v != w.value {
				t.Errorf("%s = %v, want %v", key, v, w.value)
			}
		}
		if !found {
			t.Errorf("no %s series", key)
		}
	}
	if n := len(series["locus_workload_memory_qos_bytes"]); n != 1 {
		t.Errorf("locus_workload_memory_qos_bytes: %d series, want memory.low only (max is no number, the others are no bytes)", n)
	}
	build := series["locus_build_info"]
	if len(build) != 1 || build[0].GetGauge().GetValue() != 1 {
		t.Fatalf("locus_build_info: %v", build)
	}
	if got := labelsOf(build[0]); got["version"] != "0.2.0" || got["commit"] != "abc1234" || got["goversion"] != runtime.Version() {
		t.Errorf("locus_build_info labels %v", got)
	}
}

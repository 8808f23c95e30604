package workload

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cpuburst"
)

// TestStandaloneCPUBurst: a HostConfig workload's cpuBurst field is its
// annotation (and wins over one), its limits.cpu its container's limit;
// cpuBurstConfig is the node's strategy; a bad field refuses the file,
// naming the workload.
func TestStandaloneCPUBurst(t *testing.T) {
	doc := `apiVersion: locus.io/v1alpha1
kind: HostConfig
cpuBurstConfig: {clusterStrategy: {policy: cpuBurstOnly, cpuBurstPercent: 50}}
workloads:
- name: web
  command: [sleep, "1"]
  resources: {limits: {cpu: 1500m}}
  annotations: {koordinator.sh/cpuBurst: '{"policy": "none"}'}
  cpuBurst: {policy: auto}
`
	cfg, err := ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.CPUBurst; s.Source != "clusterStrategy" || *s.Strategy.Policy != cpuburst.CPUBurstOnly {
		t.Fatalf("node strategy %+v", s)
	}
	w := FromHostConfig(cfg.Host.Workloads[0], "locus.slice/web").Plan
	if w.CPUBurstInvalid != "" || w.CPUBurst == nil || *w.CPUBurst.Policy != cpuburst.Auto || w.Containers[0].CPULimitMilli != 1500 {
		t.Fatalf("workload: %+v %q limit %d", w.CPUBurst, w.CPUBurstInvalid, w.Containers[0].CPULimitMilli)
	}
	bad := strings.Replace(doc, "cpuBurst: {policy: auto}", "cpuBurst: {policy: auto, cpuBurstPercnt: 5}", 1)
	if _, err := ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "workloads[0].cpuBurst.cpuBurstPercnt: unknown field") {
		t.Errorf("bad cpuBurst: %v", err)
	}
	bad = strings.Replace(doc, "policy: cpuBurstOnly", "policy: often", 1)
	if _, err := ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "cpuBurstConfig: clusterStrategy.policy") {
		t.Errorf("bad cpuBurstConfig: %v", err)
	}
}

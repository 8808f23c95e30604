package workload

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/fuzzseed"
)

func TestParseCPUBurst(t *testing.T) {
	c, err := ParseCPUBurst(`{"policy": "auto", "cpuBurstPercent": 200, "cfsQuotaBurstPercent": 150, "cfsQuotaBurstPeriodSeconds": -1, "sharePoolThresholdPercent": 60}`, "a")
	if err != nil || *c.Policy != cpuburst.Auto || *c.CPUBurstPercent != 200 || *c.CFSQuotaBurstPercent != 150 || *c.CFSQuotaBurstPeriodSeconds != -1 || *c.SharePoolThresholdPercent != 60 {
		t.Fatalf("%+v, %v", c, err)
	}
	for raw, want := range map[string]string{
		`{"policy": "always"}`:                `a.policy: "always" is not one of auto, cpuBurstOnly, cfsQuotaBurstOnly, none`,
		`{"policy": "Auto"}`:                  `a.policy: "Auto" is not one of`,
		`{"cpuBurstPercent": -1}`:             "a.cpuBurstPercent: -1 is out of range 0..10000",
		`{"cfsQuotaBurstPercent": 50}`:        "a.cfsQuotaBurstPercent: 50 is out of range 100..10000",
		`{"cfsQuotaBurstPeriodSeconds": -2}`:  "a.cfsQuotaBurstPeriodSeconds: -2 is out of range -1..86400",
		`{"sharePoolThresholdPercent": "50"}`: `a.sharePoolThresholdPercent: want an integer, got "50"`,
		`{"cpuBurstPercent": 1.5}`:            "a.cpuBurstPercent: want an integer",
		`{"cpuburstpercent": 100}`:            "a.cpuburstpercent: unknown field",
		`[1]`:                                 "a: want a JSON object",
		`auto`:                                "a: want a JSON object",
		`{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 10}`: "more errors not shown",
	} {
		if _, err := ParseCPUBurst(raw, "a"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	if _, err := ParseCPUBurst(`{"policy": "`+strings.Repeat("x", MaxCPUBurstAnnotation)+`"}`, "a"); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("oversized annotation: %v", err)
	}
}

// TestCPUBurstConfig: clusterStrategy, and the first nodeStrategies entry
// selecting the node merged over it; every entry checked on every node.
func TestCPUBurstConfig(t *testing.T) {
	raw := `{"clusterStrategy": {"policy": "cpuBurstOnly", "cpuBurstPercent": 100},
	  "nodeStrategies": [{"name": "big", "nodeSelector": {"matchLabels": {"pool": "big"}}, "policy": "auto", "sharePoolThresholdPercent": 80}]}`
	c, err := ParseCPUBurstConfig(raw, nil)
	if err != nil || c.Source != "clusterStrategy" || *c.Strategy.Policy != cpuburst.CPUBurstOnly || c.Strategy.SharePoolThresholdPercent != nil {
		t.Fatalf("cluster: %+v, %v", c, err)
	}
	c, err = ParseCPUBurstConfig(raw, map[string]string{"pool": "big"})
	if err != nil || c.Source != "big" || *c.Strategy.Policy != cpuburst.Auto || *c.Strategy.CPUBurstPercent != 100 || *c.Strategy.SharePoolThresholdPercent != 80 {
		t.Fatalf("node: %+v, %v", c, err)
	}
	yaml := "clusterStrategy:\n  policy: auto\n"
	if c, err := ParseCPUBurstConfig(yaml, nil); err != nil || *c.Strategy.Policy != cpuburst.Auto {
		t.Fatalf("YAML: %+v, %v", c, err)
	}
	if c, err := ParseCPUBurstConfig("  ", nil); err != nil || c.Strategy.Policy != nil {
		t.Fatalf("blank: %+v, %v", c, err)
	}
	for raw, want := range map[string]string{
		`{"clusterStrategy": {"policy": "sometimes"}}`:                                                    "clusterStrategy.policy",
		`{"clusterStrategy": {"cpuBurstPercent": 1}, "nodeStrategy": []}`:                                 `unknown field "nodeStrategy"`,
		`{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"x": "y"}}, "cfsQuotaBurstPercent": 20}]}`: "nodeStrategies[0].cfsQuotaBurstPercent: 20 is out of range",
		`{"nodeStrategies": [{"cpuBurstPercent": 20}]}`:                                                   "nodeStrategies[0].nodeSelector: missing",
		`{"clusterStrategy": [1]}`:                                                                        "clusterStrategy: want an object",
	} {
		if _, err := ParseCPUBurstConfig(raw, map[string]string{"pool": "big"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// The annotation is pod text, written by whoever may create a pod.
func FuzzParseCPUBurst(f *testing.F) {
	f.Add(`{"policy": "auto", "cpuBurstPercent": 1000}`)
	f.Add(`{"policy": "none"}`)
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return `{"policy": ` + s + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"cfsQuotaBurstPercent": ` + s + `}` })
	f.Fuzz(func(t *testing.T, raw string) {
		var c cpuburst.Config
		var err error
		fuzzseed.Timed(t, "ParseCPUBurst", func() { c, err = ParseCPUBurst(raw, "annotation") })
		fuzzseed.CheckError(t, err, "annotation")
		if err != nil {
			return
		}
		s := cpuburst.Resolve(&c, cpuburst.NodeConfig{})
		if s.CPUBurstPercent < 0 || s.CPUBurstPercent > 10000 || s.CFSQuotaBurstPercent < 100 || s.SharePoolThresholdPercent > 100 {
			t.Fatalf("accepted out of range: %+v", s)
		}
	})
}

// cpu-burst-config is ConfigMap text every node agent reads.
func FuzzParseCPUBurstConfig(f *testing.F) {
	f.Add(`{"clusterStrategy": {"policy": "auto"}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "cpuBurstPercent": 50}]}`)
	f.Add("clusterStrategy:\n  policy: cfsQuotaBurstOnly\n  cfsQuotaBurstPeriodSeconds: 30\n")
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return `{"clusterStrategy": ` + s + `}` })
	fuzzseed.Add(f, func(s string) string {
		return `{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "policy": ` + s + `}]}`
	})
	f.Fuzz(func(t *testing.T, raw string) {
		var err error
		fuzzseed.Timed(t, "ParseCPUBurstConfig", func() { _, err = ParseCPUBurstConfig(raw, map[string]string{"pool": "big"}) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		if _, err := ParseCPUBurstConfig(raw, nil); err != nil {
			t.Fatalf("accepted with labels, refused without: %v", err)
		}
	})
}

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

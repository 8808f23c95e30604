package sloconfig

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cpuburst"
)

func TestParseCPUBurstAnnotation(t *testing.T) {
	c, err := ParseCPUBurstAnnotation(`{"policy": "auto", "cpuBurstPercent": 200, "cfsQuotaBurstPercent": 150, "cfsQuotaBurstPeriodSeconds": -1, "sharePoolThresholdPercent": 60}`, "a")
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
		if _, err := ParseCPUBurstAnnotation(raw, "a"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	if _, err := ParseCPUBurstAnnotation(`{"policy": "`+strings.Repeat("x", MaxAnnotationBytes)+`"}`, "a"); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("oversized annotation: %v", err)
	}
}

// TestCPUBurstConfig: clusterStrategy, and the first nodeStrategies entry
// selecting the node merged over it; every entry checked on every node.
func TestCPUBurstConfig(t *testing.T) {
	raw := `{"clusterStrategy": {"policy": "cpuBurstOnly", "cpuBurstPercent": 100},
	  "nodeStrategies": [{"name": "big", "nodeSelector": {"matchLabels": {"pool": "big"}}, "policy": "auto", "sharePoolThresholdPercent": 80}]}`
	b, err := ParseCPUBurst(raw)
	if err != nil {
		t.Fatal(err)
	}
	if c := b.ForNode(nil); c.Source != "clusterStrategy" || *c.Strategy.Policy != cpuburst.CPUBurstOnly || c.Strategy.SharePoolThresholdPercent != nil {
		t.Fatalf("cluster: %+v", c)
	}
	if c := b.ForNode(map[string]string{"pool": "big"}); c.Source != "big" || *c.Strategy.Policy != cpuburst.Auto || *c.Strategy.CPUBurstPercent != 100 || *c.Strategy.SharePoolThresholdPercent != 80 {
		t.Fatalf("node: %+v", c)
	}
	yaml := "clusterStrategy:\n  policy: auto\n"
	if b, err := ParseCPUBurst(yaml); err != nil || *b.ForNode(nil).Strategy.Policy != cpuburst.Auto {
		t.Fatalf("YAML: %+v, %v", b, err)
	}
	if b, err := ParseCPUBurst("  "); err != nil || b.ForNode(nil) != (cpuburst.NodeConfig{}) {
		t.Fatalf("blank: %+v, %v", b, err)
	}
	if b, err := ParseCPUBurst("{}"); err != nil || b.ForNode(nil).Source != "clusterStrategy" {
		t.Fatalf("empty: %+v, %v", b, err)
	}
	for raw, want := range map[string]string{
		`{"clusterStrategy": {"policy": "sometimes"}}`:                                                    "clusterStrategy.policy",
		`{"clusterStrategy": {"cpuBurstPercent": 1}, "nodeStrategy": []}`:                                 `unknown field "nodeStrategy"`,
		`{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"x": "y"}}, "cfsQuotaBurstPercent": 20}]}`: "nodeStrategies[0].cfsQuotaBurstPercent: 20 is out of range",
		`{"nodeStrategies": [{"cpuBurstPercent": 20}]}`:                                                   "nodeStrategies[0].nodeSelector: missing",
		`{"clusterStrategy": [1]}`:                                                                        "clusterStrategy: want an object",
		`null`:                                                                                            "cpu-burst-config: want an object",
		strings.Repeat(" ", MaxCPUBurstConfig) + "{}":                                                     "cpu-burst-config: 262146 bytes, at most 262144",
	} {
		if _, err := ParseCPUBurst(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.80s: %v, want %q", raw, err, want)
		}
	}
}

package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
)

// The agent's /metrics as a scraper reads it: parsed by Prometheus' own text
// parser, every family passes promlint (what `promtool check metrics` runs),
// every *_ratio series is a ratio from 0 to 1, locus_build_info names the
// build, and no series carries a container label, which would clash with the
// scrape target's own.
func TestMetricsScrapeParsesAndLints(t *testing.T) {
	body := liveMetrics(t)
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("Prometheus' text parser: %v", err)
	}
	var names []string
	for name := range families {
		names = append(names, name)
	}
	lint := promlint.New(strings.NewReader(body))
	problems, err := lint.Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		t.Errorf("promlint: %s: %s", pr.Metric, pr.Text)
	}
	ratios := 0
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "container" {
					t.Errorf("%s has a container label (%q)", name, l.GetValue())
				}
			}
			if strings.HasSuffix(name, "_ratio") {
				ratios++
				if v := m.GetGauge().GetValue(); v < 0 || v > 1 {
					t.Errorf("%s%v = %v: not a ratio from 0 to 1", name, m.GetLabel(), v)
				}
			}
		}
	}
	if ratios == 0 {
		t.Errorf("no *_ratio series among %v: the check above checked nothing", names)
	}
	// docs/agent.md's table lists every metric (the chart's alerting rules are
	// checked against it).
	doc, err := os.ReadFile("../../docs/agent.md")
	if os.IsNotExist(err) && inGuest() {
		t.Skip("the NUMA test guest holds this package's directory only, not the docs")
	}
	if err != nil {
		t.Fatal(err)
	}
	for name := range families {
		if strings.HasPrefix(name, "locus_") && !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("docs/agent.md's metrics table does not list %s", name)
		}
	}
	build := families["locus_build_info"]
	if build == nil || len(build.GetMetric()) != 1 || len(build.GetMetric()[0].GetLabel()) != 3 {
		t.Fatalf("locus_build_info: %v", build)
	}
}

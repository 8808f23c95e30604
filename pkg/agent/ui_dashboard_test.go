package agent

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/pkg/cgroup"
)

const chartDir = "../../deploy/helm/locus"

// dashboardQueries are every PromQL expression of the chart's Grafana
// dashboard: panel targets (rows included) and variable queries.
func dashboardQueries(t *testing.T, raw []byte) []string {
	t.Helper()
	var d struct {
		UID        string
		Title      string
		Panels     []dashPanel
		Templating struct {
			List []struct {
				Name       string
				Type       string
				Definition string
			}
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("the dashboard is not valid JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard uid %q, title %q, %d panels", d.UID, d.Title, len(d.Panels))
	}
	var out []string
	ids := map[int]bool{}
	var walk func(ps []dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d is used twice", p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: %d queries, data source %q", p.Title, len(p.Targets), p.Datasource.UID)
			}
			for _, q := range p.Targets {
				out = append(out, q.Expr)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			out = append(out, v.Definition)
		}
	}
	return out
}

type dashPanel struct {
	ID         int
	Type       string
	Title      string
	Datasource struct{ UID string }
	Targets    []struct{ Expr string }
	Panels     []dashPanel
}

// An agent that has decided, migrated and found a kernel file missing,
// serving /metrics: every series the dashboard can ask for exists.
func liveMetrics(t *testing.T) string {
	t.Helper()
	tree := newCgroupTree(t, cgroup.V2, true, "0-3")
	tree.mkcg("pods/redis")
	tree.set("", "pods/redis", "cgroup.procs", "4242")
	if err := os.Remove(filepath.Join(tree.dir("", "pods/redis"), "memory.wmark_min_adj")); err != nil {
		t.Fatal(err)
	}
	cfg := locConfig("1", `{"policy": "bestEffort"}`, "resourceQOSConfig: {clusterStrategy: {lsClass: {memoryQOS: {enable: true}}}}\n", "")
	h := locAgent(t, tree, twoNodes, cfg, "", &fakeMigrator{}, &fakeClock{t: locT0}, nil)
	base := serveUI(t, h)
	h.settle()
	body, _ := fetch(t, base+"/metrics")
	return body
}

func TestGrafanaDashboardQueriesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "dashboards/locus.json"))
	if os.IsNotExist(err) && inGuest() {
		t.Skip("the NUMA test guest holds this package's directory only, not the chart")
	}
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, line := range strings.Split(liveMetrics(t), "\n") {
		if name, _, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			name, _, _ = strings.Cut(name, "{")
			exported[name] = true
		}
	}
	metric := regexp.MustCompile(`\blocus_[a-z0-9_]+`)
	used := map[string]bool{}
	for _, q := range dashboardQueries(t, raw) {
		names := metric.FindAllString(q, -1)
		if len(names) == 0 {
			t.Errorf("query %q names no locus metric", q)
		}
		for _, n := range names {
			used[n] = true
			if !exported[n] {
				t.Errorf("query %q: the agent exports no %s", q, n)
			}
		}
	}
	// What the dashboard is for: each of these has a panel.
	for _, n := range []string{"locus_memory_local_ratio", "locus_memory_pages_migrated_total",
		"locus_memory_migration_longest_stall_seconds", "locus_numa_node_cpus", "locus_workload_memory_qos_bytes",
		"locus_reconcile_duration_seconds_bucket"} {
		if !used[n] {
			t.Errorf("the dashboard has no panel on %s", n)
		}
	}
}

// The chart ships the dashboard file unchanged, in a ConfigMap with the
// label Grafana's sidecar looks for, only when asked to.
func TestGrafanaDashboardConfigMap(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "dashboards/locus.json"))
	if os.IsNotExist(err) && inGuest() {
		t.Skip("the NUMA test guest holds this package's directory only, not the chart")
	}
	if err != nil {
		t.Fatal(err)
	}
	helm := os.Getenv("LOCUS_HELM")
	if helm == "" {
		helm = "../../.cache/bin/helm"
	}
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("helm not found at %s: install it with hack/helm-check.sh --install-only (or set LOCUS_HELM)", helm)
	}
	render := func(set ...string) []map[string]any {
		args := []string{"template", "locus", chartDir, "--namespace", "monitoring"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		cmd := exec.Command(helm, args...)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, stderr.String())
		}
		var cms []map[string]any
		for _, doc := range strings.Split(string(out), "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("rendered chart: %v", err)
			}
			if obj["kind"] == "ConfigMap" && strings.HasSuffix(obj["metadata"].(map[string]any)["name"].(string), "-grafana-dashboard") {
				cms = append(cms, obj)
			}
		}
		return cms
	}
	if cms := render(); len(cms) != 0 {
		t.Errorf("the dashboard is rendered by default: %v", cms)
	}
	cms := render("grafana.dashboard.enabled=true", "grafana.dashboard.annotations.grafana_folder=Locus")
	if len(cms) != 1 {
		t.Fatalf("%d dashboard ConfigMaps rendered, want 1", len(cms))
	}
	meta := cms[0]["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	data, _ := cms[0]["data"].(map[string]any)
	if labels["grafana_dashboard"] != "1" || meta["namespace"] != "monitoring" || annotations["grafana_folder"] != "Locus" {
		t.Errorf("dashboard ConfigMap metadata %v", meta)
	}
	if got, _ := data["locus.json"].(string); got != strings.TrimSuffix(string(raw), "\n") {
		t.Errorf("the ConfigMap's locus.json differs from dashboards/locus.json (%d bytes, want %d)", len(got), len(raw)-1)
	}
	if keys := slices.Sorted(maps.Keys(data)); !slices.Equal(keys, []string{"locus.json"}) {
		t.Errorf("ConfigMap keys %v", keys)
	}
}

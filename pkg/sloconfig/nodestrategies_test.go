package sloconfig

import (
	"strings"
	"testing"
)

// onNode decodes resource-qos-config and picks what is in force on a node
// with these labels.
func onNode(raw string, labels map[string]string) (Node, error) {
	r, err := ParseResourceQoS(raw)
	return Doc{ResourceQoS: r}.ForNode(labels), err
}

// cluster: memory QoS on for BE with throttling 80, locality bestEffort for LS.
const nsCluster = `"clusterStrategy": {
  "lsClass": {"memoryLocality": {"policy": "bestEffort", "migrateIntervalMinutes": 10}},
  "beClass": {"memoryQOS": {"enable": true, "throttlingPercent": 80}}}`

func TestNodeStrategies(t *testing.T) {
	big := map[string]string{"pool": "big", "zone": "a"}
	cases := []struct {
		name       string
		raw        string
		labels     map[string]string
		strategy   string // the entry in force
		throttling int64  // beClass memoryQOS throttlingPercent in force
		enable     bool   // beClass memoryQOS enable in force
		lsPolicy   LocalityPolicy
		lsInterval int
	}{
		{name: "no nodeStrategies: the cluster strategy", raw: `{` + nsCluster + `}`, labels: big,
			throttling: 80, enable: true, lsPolicy: LocalityBestEffort, lsInterval: 10},
		{name: "matchLabels selects the node: the entry's fields over the cluster's, the rest kept",
			raw: `{` + nsCluster + `, "nodeStrategies": [{"name": "big-nodes", "nodeSelector": {"matchLabels": {"pool": "big"}},
			  "beClass": {"memoryQOS": {"throttlingPercent": 50}}}]}`, labels: big,
			strategy: "big-nodes", throttling: 50, enable: true, lsPolicy: LocalityBestEffort, lsInterval: 10},
		{name: "no entry selects the node: the cluster strategy",
			raw: `{` + nsCluster + `, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "small"}},
			  "beClass": {"memoryQOS": {"throttlingPercent": 50}}}]}`, labels: big,
			throttling: 80, enable: true, lsPolicy: LocalityBestEffort, lsInterval: 10},
		{name: "the first entry selecting the node wins, unnamed",
			raw: `{` + nsCluster + `, "nodeStrategies": [
			  {"nodeSelector": {"matchLabels": {"pool": "small"}}, "beClass": {"memoryQOS": {"throttlingPercent": 10}}},
			  {"nodeSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}, "beClass": {"memoryQOS": {"enable": false}}},
			  {"name": "later", "nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": {"throttlingPercent": 30}}}]}`,
			labels: big, strategy: "nodeStrategies[1]", throttling: 80, enable: false, lsPolicy: LocalityBestEffort, lsInterval: 10},
		{name: "memoryLocality overridden per node; DoesNotExist matches a node without the label",
			raw: `{` + nsCluster + `, "nodeStrategies": [{"name": "no-locality", "nodeSelector": {"matchExpressions": [{"key": "numa", "operator": "DoesNotExist"}]},
			  "lsClass": {"memoryLocality": {"policy": "none"}}}]}`, labels: big,
			strategy: "no-locality", throttling: 80, enable: true, lsPolicy: LocalityNone, lsInterval: 10},
		{name: "a node without labels (standalone) is not selected by matchLabels",
			raw:        `{` + nsCluster + `, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": {"enable": false}}}]}`,
			throttling: 80, enable: true, lsPolicy: LocalityBestEffort, lsInterval: 10},
		{name: "YAML, and a class the cluster strategy lacks",
			raw:    "clusterStrategy: {}\nnodeStrategies:\n- nodeSelector: {matchLabels: {pool: big}}\n  beClass: {memoryQOS: {enable: true, throttlingPercent: 60}}\n",
			labels: big, strategy: "nodeStrategies[0]", throttling: 60, enable: true},
		{name: "an entry's numbers are read as YAML reads them, as they always were",
			raw:    `{` + nsCluster + `, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": {"throttlingPercent": 50.0}}}]}`,
			labels: big, strategy: "nodeStrategies[0]", throttling: 50, enable: true, lsPolicy: LocalityBestEffort, lsInterval: 10},
		{name: "nodeStrategies null is none", raw: `{` + nsCluster + `, "nodeStrategies": null}`, labels: big,
			throttling: 80, enable: true, lsPolicy: LocalityBestEffort, lsInterval: 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := onNode(tc.raw, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Strategy != tc.strategy {
				t.Errorf("entry in force %q, want %q", cfg.Strategy, tc.strategy)
			}
			be := cfg.MemQoS.BE
			if be == nil || be.Params.ThrottlingPercent == nil || *be.Params.ThrottlingPercent != tc.throttling {
				t.Errorf("beClass memoryQOS %+v, want throttlingPercent %d", be, tc.throttling)
			}
			if be != nil && (be.Enable != nil && *be.Enable) != tc.enable {
				t.Errorf("beClass memoryQOS enable %v, want %v", be.Enable, tc.enable)
			}
			if ls := cfg.Locality["lsClass"]; ls.Policy != tc.lsPolicy || ls.MigrateIntervalMinutes != tc.lsInterval {
				t.Errorf("lsClass memoryLocality %+v, want %s every %d", ls, tc.lsPolicy, tc.lsInterval)
			}
		})
	}
}

func TestNodeStrategiesRefused(t *testing.T) {
	entry := func(s string) string { return `{` + nsCluster + `, "nodeStrategies": [` + s + `]}` }
	many := strings.Repeat(`{"nodeSelector": {"matchLabels": {"a": "b"}}},`, MaxNodeStrategies) + `{"nodeSelector": {"matchLabels": {"a": "b"}}}`
	cases := []struct{ raw, want string }{
		{`{` + nsCluster + `, "nodeStrategies": {"a": 1}}`, "nodeStrategies: want an array of objects"},
		{entry(`3`), "nodeStrategies[0]: want an object"},
		{entry(`{"beClass": {}}`), "nodeStrategies[0].nodeSelector: missing"},
		{entry(`{"nodeSelector": {}}`), "nodeStrategies[0].nodeSelector: empty"},
		{entry(`{"nodeSelector": {"matchLabel": {"a": "b"}}}`), `nodeStrategies[0].nodeSelector: unknown field "matchLabel"`},
		{entry(`{"nodeSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}`), `nodeStrategies[0].nodeSelector: "Near" is not a valid label selector operator`},
		{entry(`{"nodeSelector": {"matchLabels": {"a": "b c"}}}`), `nodeStrategies[0].nodeSelector: values[0][a]: Invalid value: "b c"`},
		{entry(`{"name": 7, "nodeSelector": {"matchLabels": {"a": "b"}}}`), "nodeStrategies[0].name: want a string"},
		{entry(many), "nodeStrategies: more than 64 entries"},
		{entry(`{"nodeSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": [` + strings.Repeat(`"x",`, MaxSelectorValues) + `"x"]}]}}`),
			"nodeStrategies[0].nodeSelector.matchExpressions[0].values: 65 values, at most 64"},
		// An entry that selects no node here is still checked, and its error
		// names the entry, not clusterStrategy.
		{entry(`{"nodeSelector": {"matchLabels": {"pool": "small"}}, "beClass": {"memoryQOS": {"throttlingPercent": 120}}}`),
			"nodeStrategies[0].beClass.memoryQOS.throttlingPercent: 120 is out of range 0-100"},
		{entry(`{"nodeSelector": {"matchLabels": {"pool": "small"}}}, {"nodeSelector": {"matchLabels": {"pool": "big"}}, "lsClass": {"memoryLocality": {"policy": "often"}}}`),
			`nodeStrategies[1].lsClass.memoryLocality.policy: "often" is not bestEffort or none`},
		{entry(`{"nodeSelector": {"matchLabels": {"pool": "small"}}, "lsClass": {"cpuQOS": {"schedIdle": 3}}}`),
			"nodeStrategies[0].lsClass.cpuQOS.schedIdle: 3 is out of range 0-1"},
		// Every entry is merged over clusterStrategy: all together they are bounded.
		{`{"clusterStrategy": {"x": "` + strings.Repeat("x", 300<<10) + `"}, "nodeStrategies": [` +
			strings.Repeat(`{"nodeSelector": {"matchLabels": {"a": "b"}}},`, 60) + `{"nodeSelector": {"matchLabels": {"a": "b"}}}]}`,
			"nodeStrategies: merged over clusterStrategy, the entries make more than 16777216 bytes"},
	}
	for _, tc := range cases {
		if _, err := ParseResourceQoS(tc.raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.80s...: got %v, want an error with %q", tc.raw, err, tc.want)
		}
	}
}

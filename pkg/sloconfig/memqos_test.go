package memqos

import (
	"fmt"
	"strings"
	"testing"
)

func memCfg(class, body string) string {
	return fmt.Sprintf(`{"clusterStrategy": {%q: {"memoryQOS": %s}}}`, class, body)
}

func TestParseRangeBounds(t *testing.T) {
	cases := []struct {
		field string
		v     string
		err   string // "" = accepted
	}{
		{"minLimitPercent", "0", ""}, {"minLimitPercent", "100", ""},
		{"minLimitPercent", "101", "minLimitPercent: 101 is out of range 0-100"},
		{"minLimitPercent", "-1", "minLimitPercent: -1 is out of range 0-100"},
		{"lowLimitPercent", "0", ""}, {"lowLimitPercent", "100", ""},
		{"lowLimitPercent", "101", "out of range 0-100"}, {"lowLimitPercent", "-1", "out of range 0-100"},
		{"throttlingPercent", "0", ""}, {"throttlingPercent", "100", ""},
		{"throttlingPercent", "101", "out of range 0-100"}, {"throttlingPercent", "-1", "out of range 0-100"},
		{"throttlingPercent", "120", "clusterStrategy.lsClass.memoryQOS.throttlingPercent: 120 is out of range 0-100"},
		{"wmarkRatio", "0", ""}, {"wmarkRatio", "100", ""},
		{"wmarkRatio", "101", "out of range 0-100"}, {"wmarkRatio", "-1", "out of range 0-100"},
		{"wmarkMinAdj", "-25", ""}, {"wmarkMinAdj", "50", ""}, {"wmarkMinAdj", "0", ""},
		{"wmarkMinAdj", "-26", "wmarkMinAdj: -26 is out of range -25..50"},
		{"wmarkMinAdj", "51", "wmarkMinAdj: 51 is out of range -25..50"},
		{"wmarkRatio", "99999999999999999999", "99999999999999999999 is out of range 0-100"},
		{"wmarkRatio", "95.5", "wmarkRatio: 95.5 is not an integer"},
		{"wmarkRatio", `"95"`, `wmarkRatio: got a string "95", want an integer`},
		{"wmarkRatio", "null", ""},
		{"priority", "12", ""}, {"priority", "13", "priority: 13 is out of range 0-12"},
		{"wmarkScalePermill", "0", "out of range 1-1000"}, {"oomKillGroup", "1", ""}, {"priorityEnable", "2", "out of range 0-1"},
	}
	for _, tc := range cases {
		t.Run(tc.field+"="+tc.v, func(t *testing.T) {
			cfg, err := ParseResourceQoSConfig(memCfg("lsClass", fmt.Sprintf(`{"enable": true, %q: %s}`, tc.field, tc.v)))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want it to contain %q", err, tc.err)
			case tc.err == "" && cfg.LS == nil:
				t.Fatal("lsClass section lost")
			}
		})
	}
}

func TestParseStoresValues(t *testing.T) {
	cfg, err := ParseResourceQoSConfig(`{"clusterStrategy": {
		"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 10, "lowLimitPercent": 20,
			"throttlingPercent": 30, "wmarkRatio": 40, "wmarkMinAdj": -5, "priority": 3}, "cpuQOS": {"groupIdentity": 2}},
		"beClass": {"memoryQOS": {"enable": false}, "resctrlQOS": {"enable": true}, "memoryLocality": {"policy": "bestEffort"}},
		"lsrClass": {"cpuQOS": {"enable": true}},
		"systemClass": {"memoryQOS": {"wmarkRatio": 90}},
		"cgroupRoot": {"memoryQOS": {"whatever": "other code reads this"}}},
		"nodeStrategies": [{"nodeSelector": {}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got := TableDefaults(false).With(cfg.LS.Params)
	if want := (Profile{10, 20, 30, 40, -5}); got != want || !*cfg.LS.Enable {
		t.Errorf("lsClass = %+v enable %v, want %+v", got, *cfg.LS.Enable, want)
	}
	if cfg.BE == nil || *cfg.BE.Enable || cfg.BE.Params != (Params{}) {
		t.Errorf("beClass = %+v", cfg.BE)
	}
	if cfg.LSR != nil {
		t.Error("lsrClass has no memoryQOS, want nil")
	}
	if cfg.System == nil || cfg.System.Enable != nil || *cfg.System.Params.WmarkRatio != 90 {
		t.Errorf("systemClass = %+v", cfg.System)
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct{ name, raw, err string }{
		{"enable as string", memCfg("lsClass", `{"enable": "yes"}`), `clusterStrategy.lsClass.memoryQOS.enable: got a string "yes", want true or false`},
		{"enable as number", memCfg("beClass", `{"enable": 1}`), `beClass.memoryQOS.enable: got a number 1, want true or false`},
		{"typo with case hint", memCfg("lsClass", `{"MinLimitPercent": 1}`), `memoryQOS.MinLimitPercent: unknown field (did you mean "minLimitPercent"?)`},
		{"unknown field", memCfg("lsClass", `{"minLimit": 1}`), `clusterStrategy.lsClass.memoryQOS.minLimit: unknown field`},
		{"policy belongs to pods", memCfg("lsClass", `{"policy": "auto"}`), `memoryQOS.policy: unknown field`},
		{"memoryQOS not an object", memCfg("lsrClass", `true`), `clusterStrategy.lsrClass.memoryQOS: got a boolean true, want an object`},
		{"class not an object", `{"clusterStrategy": {"beClass": []}}`, `clusterStrategy.beClass: got an array [], want an object`},
		{"strategy not an object", `{"clusterStrategy": "on"}`, `clusterStrategy: got a string "on", want an object`},
		{"root not an object", `[1]`, `resource-qos-config: got an array [1], want an object`},
		{"malformed JSON", `{"clusterStrategy": {"lsClass": `, `resource-qos-config: malformed JSON at byte`},
		{"every problem is listed", memCfg("lsClass", `{"wmarkRatio": 101, "wmarkMinAdj": 99}`), "wmarkMinAdj: 99 is out of range -25..50\nclusterStrategy.lsClass.memoryQOS.wmarkRatio: 101"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseResourceQoSConfig(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want it to contain %q", err, tc.err)
			}
			if cfg != (Config{}) {
				t.Errorf("a rejected config must be empty, got %+v", cfg)
			}
		})
	}
}

func TestParseConfigYAMLAndBlank(t *testing.T) {
	cfg, err := ParseResourceQoSConfig("clusterStrategy:\n  beClass:\n    memoryQOS:\n      enable: true\n      wmarkMinAdj: 40\n")
	if err != nil || cfg.BE == nil || !*cfg.BE.Enable || *cfg.BE.Params.WmarkMinAdj != 40 {
		t.Fatalf("yaml: %+v, %v", cfg.BE, err)
	}
	if _, err := ParseResourceQoSConfig("clusterStrategy:\n  beClass:\n    memoryQOS:\n      wmarkRatio: 200\n"); err == nil ||
		!strings.Contains(err.Error(), "clusterStrategy.beClass.memoryQOS.wmarkRatio: 200 is out of range 0-100") {
		t.Fatalf("yaml range error: %v", err)
	}
	for _, blank := range []string{"", "  \n", "null", "{}"} {
		if cfg, err := ParseResourceQoSConfig(blank); err != nil || cfg != (Config{}) {
			t.Errorf("%q: %+v, %v", blank, cfg, err)
		}
	}
}

func TestParseNamespaceConfig(t *testing.T) {
	nc, err := ParseNamespaceConfig(`{"enabledNamespaces": ["allow-ns", "b"], "disabledNamespaces": ["block-ns"]}`)
	if err != nil || strings.Join(nc.Enabled, ",") != "allow-ns,b" || strings.Join(nc.Disabled, ",") != "block-ns" {
		t.Fatalf("%+v, %v", nc, err)
	}
	if nc, err := ParseNamespaceConfig("enabledNamespaces: [a]\n"); err != nil || nc.Enabled[0] != "a" {
		t.Fatalf("yaml: %+v, %v", nc, err)
	}
	bad := []struct{ raw, err string }{
		{`{"enabledNamespaces": "allow-ns"}`, `memory-qos.enabledNamespaces: got a string "allow-ns", want an array of strings`},
		{`{"disabledNamespaces": ["a", 3]}`, `memory-qos.disabledNamespaces[1]: got a number 3, want a string`},
		{`{"enabledNamespace": ["a"]}`, `memory-qos.enabledNamespace: unknown field`},
		{`{"enabledNamespaces": ["x"], "disabledNamespaces": ["x"]}`, `namespace "x" is in both`},
		{`{"enabledNamespaces": [`, `memory-qos: malformed JSON`},
	}
	for _, tc := range bad {
		if _, err := ParseNamespaceConfig(tc.raw); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.raw, err, tc.err)
		}
	}
}

func TestParsePodSetting(t *testing.T) {
	cases := []struct {
		raw    string
		policy Policy
		low    int64 // -1 = not given
		err    string
	}{
		{`{"policy": "auto"}`, PolicyAuto, -1, ""},
		{`{"policy": "AUTO"}`, PolicyAuto, -1, ""},
		{`{"policy": " None "}`, PolicyNone, -1, ""},
		{`{"policy": "Default"}`, PolicyDefault, -1, ""},
		{`{"policy": ""}`, PolicyDefault, -1, ""},
		{`{}`, PolicyDefault, -1, ""},
		{``, PolicyDefault, -1, ""},
		{`{"policy": "auto", "lowLimitPercent": 60}`, PolicyAuto, 60, ""},
		{`{lowLimitPercent: 70}`, PolicyDefault, 70, ""},
		{`{"policy": "on"}`, "", 0, `policy: "on" is not one of auto, default, none`},
		{`{"policy": true}`, "", 0, `policy: got a boolean true, want a string`},
		{`{"policy": "auto", "enable": true}`, "", 0, `enable: not a pod setting`},
		{`{"policy": "auto", "lowLimitPercent": 101}`, "", 0, `lowLimitPercent: 101 is out of range 0-100`},
		{`{"Policy": "auto"}`, "", 0, `Policy: unknown field (did you mean "policy"?)`},
		{`"auto"`, "", 0, `got a string "auto", want an object`},
		{`{"policy": "auto"`, "", 0, `malformed JSON`},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			ps, err := ParsePodSetting(tc.raw)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || ps.Policy != tc.policy {
				t.Fatalf("%+v, %v; want policy %q", ps, err, tc.policy)
			}
			if got := ps.Params.LowLimitPercent; (tc.low < 0) != (got == nil) || (got != nil && *got != tc.low) {
				t.Errorf("lowLimitPercent = %v, want %d", got, tc.low)
			}
		})
	}
}

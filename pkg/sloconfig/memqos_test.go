package sloconfig

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/memqos"
)

// parseMem is the memory QoS part of a resource-qos-config value's
// clusterStrategy.
func parseMem(raw string) (memqos.Config, error) {
	r, err := ParseResourceQoS(raw)
	return r.Cluster.MemQoS, err
}

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
			cfg, err := parseMem(memCfg("lsClass", fmt.Sprintf(`{"enable": true, %q: %s}`, tc.field, tc.v)))
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
	cfg, err := parseMem(`{"clusterStrategy": {
		"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 10, "lowLimitPercent": 20,
			"throttlingPercent": 30, "wmarkRatio": 40, "wmarkMinAdj": -5, "priority": 3}, "cpuQOS": {"groupIdentity": 2}},
		"beClass": {"memoryQOS": {"enable": false}, "resctrlQOS": {"enable": true}, "memoryLocality": {"policy": "bestEffort"}},
		"lsrClass": {"cpuQOS": {"enable": true}},
		"systemClass": {"memoryQOS": {"wmarkRatio": 90}},
		"cgroupRoot": {"memoryQOS": {"whatever": "other code reads this"}}},
		"nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got := memqos.TableDefaults(false).With(cfg.LS.Params)
	if want := (memqos.Profile{MinLimitPercent: 10, LowLimitPercent: 20, ThrottlingPercent: 30, WmarkRatio: 40, WmarkMinAdj: -5}); got != want || !*cfg.LS.Enable {
		t.Errorf("lsClass = %+v enable %v, want %+v", got, *cfg.LS.Enable, want)
	}
	if cfg.BE == nil || *cfg.BE.Enable || cfg.BE.Params != (memqos.Params{}) {
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
			r, err := ParseResourceQoS(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want it to contain %q", err, tc.err)
			}
			if !reflect.DeepEqual(r, ResourceQoS{}) {
				t.Errorf("a rejected config must be empty, got %+v", r)
			}
		})
	}
}

func TestParseConfigYAMLAndBlank(t *testing.T) {
	cfg, err := parseMem("clusterStrategy:\n  beClass:\n    memoryQOS:\n      enable: true\n      wmarkMinAdj: 40\n")
	if err != nil || cfg.BE == nil || !*cfg.BE.Enable || *cfg.BE.Params.WmarkMinAdj != 40 {
		t.Fatalf("yaml: %+v, %v", cfg.BE, err)
	}
	if _, err := parseMem("clusterStrategy:\n  beClass:\n    memoryQOS:\n      wmarkRatio: 200\n"); err == nil ||
		!strings.Contains(err.Error(), "clusterStrategy.beClass.memoryQOS.wmarkRatio: 200 is out of range 0-100") {
		t.Fatalf("yaml range error: %v", err)
	}
	for _, blank := range []string{"", "  \n", "null", "{}"} {
		if cfg, err := parseMem(blank); err != nil || cfg != (memqos.Config{}) {
			t.Errorf("%q: %+v, %v", blank, cfg, err)
		}
	}
}

func TestParseNamespaces(t *testing.T) {
	nc, err := ParseNamespaces(`{"enabledNamespaces": ["allow-ns", "b"], "disabledNamespaces": ["block-ns"]}`)
	if err != nil || strings.Join(nc.Enabled, ",") != "allow-ns,b" || strings.Join(nc.Disabled, ",") != "block-ns" {
		t.Fatalf("%+v, %v", nc, err)
	}
	if nc, err := ParseNamespaces("enabledNamespaces: [a]\n"); err != nil || nc.Enabled[0] != "a" {
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
		if _, err := ParseNamespaces(tc.raw); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.raw, err, tc.err)
		}
	}
}

func TestParseMemoryQOSAnnotation(t *testing.T) {
	cases := []struct {
		raw    string
		policy memqos.Policy
		low    int64 // -1 = not given
		err    string
	}{
		{`{"policy": "auto"}`, memqos.PolicyAuto, -1, ""},
		{`{"policy": "AUTO"}`, memqos.PolicyAuto, -1, ""},
		{`{"policy": " None "}`, memqos.PolicyNone, -1, ""},
		{`{"policy": "Default"}`, memqos.PolicyDefault, -1, ""},
		{`{"policy": ""}`, memqos.PolicyDefault, -1, ""},
		{`{}`, memqos.PolicyDefault, -1, ""},
		{``, memqos.PolicyDefault, -1, ""},
		{`{"policy": "auto", "lowLimitPercent": 60}`, memqos.PolicyAuto, 60, ""},
		{`{lowLimitPercent: 70}`, memqos.PolicyDefault, 70, ""},
		{`{"policy": "on"}`, "", 0, `policy: "on" is not one of auto, default, none`},
		{`{"policy": true}`, "", 0, `policy: got a boolean true, want a string`},
		{`{"policy": "auto", "enable": true}`, "", 0, `enable: not a pod setting`},
		{`{"policy": "auto", "lowLimitPercent": 101}`, "", 0, `lowLimitPercent: 101 is out of range 0-100`},
		{`{"Policy": "auto"}`, "", 0, `Policy: unknown field (did you mean "policy"?)`},
		{`"auto"`, "", 0, `got a string "auto", want an object`},
		{`{"policy": "auto"`, "", 0, `malformed JSON`},
		// A key is hostile text too: it is cut for the message.
		{`{"polic` + strings.Repeat("\xb7", 1000) + `": 1}`, "", 0, `": unknown field`},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			ps, err := ParseMemoryQOSAnnotation(tc.raw)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || len(err.Error()) > 200 {
					t.Fatalf("error %.300v, want %q, short", err, tc.err)
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

func TestParseCPUQOS(t *testing.T) {
	r, err := ParseResourceQoS(`{"clusterStrategy": {
		"lsClass": {"cpuQOS": {"enable": true, "groupIdentity": 2, "coreExpeller": true}},
		"beClass": {"cpuQOS": {"enable": true, "groupIdentity": -1, "schedIdle": 1}, "memoryQOS": {"enable": true}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.Cluster
	ls, be := cfg.CPUQoS.LS, cfg.CPUQoS.BE
	if ls == nil || !*ls.Enable || *ls.GroupIdentity != 2 || !*ls.CoreExpeller || ls.SchedIdle != nil {
		t.Errorf("lsClass.cpuQOS = %+v", ls)
	}
	if be == nil || !*be.Enable || *be.GroupIdentity != -1 || *be.SchedIdle != 1 {
		t.Errorf("beClass.cpuQOS = %+v", be)
	}
	if cfg.MemQoS.BE == nil || cfg.MemQoS.LS != nil || cfg.CPUQoS.LSR != nil || cfg.CPUQoS.System != nil {
		t.Errorf("memory sections or other classes set: %+v", cfg)
	}
	// YAML, as the ConfigMap may hold it.
	r, err = ParseResourceQoS("clusterStrategy:\n  beClass:\n    cpuQOS:\n      enable: false\n")
	if err != nil || r.Cluster.CPUQoS.BE == nil || *r.Cluster.CPUQoS.BE.Enable {
		t.Errorf("YAML: %+v, %v", r.Cluster.CPUQoS.BE, err)
	}
}

// TestParseCPUQOSErrors: a bad cpuQOS refuses the whole value, every
// problem named by its field, memory settings included.
func TestParseCPUQOSErrors(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"clusterStrategy": {"beClass": {"cpuQOS": {"groupIdentity": -2}}}}`,
			"clusterStrategy.beClass.cpuQOS.groupIdentity: -2 is out of range -1..2"},
		{`{"clusterStrategy": {"lsClass": {"cpuQOS": {"groupIdentity": 3}}}}`,
			"clusterStrategy.lsClass.cpuQOS.groupIdentity: 3 is out of range -1..2"},
		{`{"clusterStrategy": {"beClass": {"cpuQOS": {"schedIdle": 2}}}}`,
			"clusterStrategy.beClass.cpuQOS.schedIdle: 2 is out of range 0-1"},
		{`{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": "yes"}}}}`,
			`clusterStrategy.beClass.cpuQOS.enable: got a string "yes", want true or false`},
		{`{"clusterStrategy": {"beClass": {"cpuQOS": {"GroupIdentity": -1}}}}`,
			`clusterStrategy.beClass.cpuQOS.GroupIdentity: unknown field (did you mean "groupIdentity"?)`},
		{`{"clusterStrategy": {"lsrClass": {"cpuQOS": [1]}}}`,
			"clusterStrategy.lsrClass.cpuQOS: got an array [1], want an object"},
		{`{"clusterStrategy": {"beClass": {"cpuQOS": {"coreExpeller": 1}, "memoryQOS": {"wmarkRatio": 101}}}}`,
			"clusterStrategy.beClass.cpuQOS.coreExpeller: got a number 1, want true or false"},
	} {
		r, err := ParseResourceQoS(tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.raw, err, tc.want)
		}
		if !reflect.DeepEqual(r, ResourceQoS{}) {
			t.Errorf("%s: a refused value still gave %+v", tc.raw, r)
		}
	}
	_, err := ParseResourceQoS(`{"clusterStrategy": {"beClass": {"cpuQOS": {"coreExpeller": 1}, "memoryQOS": {"wmarkRatio": 101}}}}`)
	if err == nil || !strings.Contains(err.Error(), "memoryQOS.wmarkRatio: 101") {
		t.Errorf("both problems named: %v", err)
	}
}

// TestBoundedProblems: a value with thousands of bad fields is refused with
// a message of a few lines, saying how many more there were.
func TestBoundedProblems(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, `"bad%d": 1, `, i)
	}
	_, err := ParseResourceQoS(`{"clusterStrategy": {"lsClass": {"memoryQOS": {` + b.String() + `"enable": true}}}}`)
	if err == nil || !strings.Contains(err.Error(), "and 4992 more problems not shown") || len(err.Error()) > 1000 {
		t.Fatalf("%d bytes: %.300v", len(fmt.Sprint(err)), err)
	}
	if _, err := ParseResourceQoS(strings.Repeat(" ", MaxValueBytes) + "{}"); err == nil || !strings.Contains(err.Error(), "resource-qos-config: 1048578 bytes, at most 1048576") {
		t.Fatalf("oversized value: %v", err)
	}
}

package locality

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseAnnotation(t *testing.T) {
	tests := []struct {
		value string
		want  Settings
		err   string
	}{
		{`{"policy": "bestEffort"}`, Settings{Policy: PolicyBestEffort}, ""},
		{`{"policy": "BestEffort"}`, Settings{Policy: PolicyBestEffort}, ""},
		{`{"policy": "NONE"}`, Settings{Policy: PolicyNone}, ""},
		{`{"policy": "bestEffort","migrateIntervalMinutes":10}`, Settings{Policy: PolicyBestEffort, MigrateIntervalMinutes: 10}, ""},
		{`{"policy": "bestEffort","migrateIntervalMinutes":0}`, Settings{Policy: PolicyBestEffort}, ""},
		{`{"policy": "always"}`, Settings{}, `koordinator.sh/memoryLocality.policy: "always" is not bestEffort or none`},
		{`{"policy": 1}`, Settings{}, "memoryLocality.policy: want a string"},
		{`{"migrateIntervalMinutes": 5}`, Settings{}, "memoryLocality.policy: missing"},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": -1}`, Settings{}, "memoryLocality.migrateIntervalMinutes: want a whole number"},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": 1.5}`, Settings{}, "migrateIntervalMinutes"},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": "10"}`, Settings{}, "migrateIntervalMinutes"},
		// The seed: migrateIntervalMinutes "none" turns memory locality off.
		{`{"policy": "bestEffort", "migrateIntervalMinutes": "none"}`, Settings{Policy: PolicyNone}, ""},
		{`{"policy": "BestEffort", "migrateIntervalMinutes": "None"}`, Settings{Policy: PolicyNone}, ""},
		{`{"migrateIntervalMinutes": "none"}`, Settings{Policy: PolicyNone}, ""},
		{`{"policy": "often", "migrateIntervalMinutes": "none"}`, Settings{}, `policy: "often" is not bestEffort or none`},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": "never"}`, Settings{}, `or "none", got`},
		{`{"policy": "bestEffort", "interval": 10}`, Settings{}, `unknown field "interval"`},
		{`bestEffort`, Settings{}, "is not a JSON object"},
		{`null`, Settings{}, "is not a JSON object"},
	}
	for _, tc := range tests {
		got, err := ParseAnnotation(tc.value)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.value, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.value, got, err, tc.want)
		}
	}
}

func TestParseClassConfig(t *testing.T) {
	// The seed's ConfigMap value, with other features' keys around it.
	raw := `{
	  "clusterStrategy": {
	    "lsClass": {
	      "memoryLocality": {"policy": "bestEffort"},
	      "memoryQOS": {"enable": true, "throttlingPercent": 80},
	      "cpuQOS": {"enable": false}
	    },
	    "beClass": {"memoryQOS": {"enable": true}},
	    "lsrClass": {"memoryLocality": {"policy": "none"}},
	    "policies": {"cpuPolicy": "groupIdentity"}
	  },
	  "nodeStrategies": []
	}`
	got, err := ParseClassConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Settings{"lsClass": {Policy: PolicyBestEffort}, "lsrClass": {Policy: PolicyNone}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	yamlRaw := "clusterStrategy:\n  lsClass:\n    memoryLocality:\n      policy: BestEffort\n      migrateIntervalMinutes: 30\n"
	if got, err := ParseClassConfig(yamlRaw); err != nil || got["lsClass"] != (Settings{Policy: PolicyBestEffort, MigrateIntervalMinutes: 30}) {
		t.Errorf("yaml: got %+v, %v", got, err)
	}
	if got, err := ParseClassConfig("  "); err != nil || len(got) != 0 {
		t.Errorf("blank: got %+v, %v", got, err)
	}
	for _, tc := range []struct{ raw, want string }{
		{`{"clusterStrategy": {"lsClass": {"memoryLocality": {"policy": "on"}}}}`, `clusterStrategy.lsClass.memoryLocality.policy: "on" is not bestEffort or none`},
		{`{"clusterStrategy": {"beClass": {"memoryLocality": "bestEffort"}}}`, "clusterStrategy.beClass.memoryLocality: want an object"},
		{`{"clusterStrategy": {"lsClass": {"memoryLocality": {"policy": "bestEffort", "x": 1}}}}`, `clusterStrategy.lsClass.memoryLocality: unknown field "x"`},
		{`[1]`, "resource-qos-config"},
		{`{"clusterStrategy": `, "resource-qos-config"},
	} {
		if _, err := ParseClassConfig(tc.raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.raw, err, tc.want)
		}
	}
}

func TestResolveAndDue(t *testing.T) {
	be, none := Settings{Policy: PolicyBestEffort}, Settings{Policy: PolicyNone}
	if Resolve(&none, &be) != none || Resolve(nil, &be) != be || Resolve(nil, nil).Policy != PolicyNone {
		t.Error("annotation must win over class config, and nothing means off")
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	every10 := Settings{Policy: PolicyBestEffort, MigrateIntervalMinutes: 10}
	tests := []struct {
		s    Settings
		ran  bool
		now  time.Time
		want bool
	}{
		{be, false, t0, true},
		{be, true, t0.Add(time.Hour), false}, // once only
		{none, false, t0, false},
		{every10, true, t0.Add(9 * time.Minute), false},
		{every10, true, t0.Add(10 * time.Minute), true},
		{every10, false, t0, true},
	}
	for _, tc := range tests {
		if got := tc.s.Due(tc.ran, t0, tc.now); got != tc.want {
			t.Errorf("%+v ran=%v at +%s: due=%v, want %v", tc.s, tc.ran, tc.now.Sub(t0), got, tc.want)
		}
	}
}

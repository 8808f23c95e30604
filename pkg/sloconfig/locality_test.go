package sloconfig

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseLocalityAnnotation(t *testing.T) {
	tests := []struct {
		value string
		want  Locality
		err   string
	}{
		{`{"policy": "bestEffort"}`, Locality{Policy: LocalityBestEffort}, ""},
		{`{"policy": "BestEffort"}`, Locality{Policy: LocalityBestEffort}, ""},
		{`{"policy": "NONE"}`, Locality{Policy: LocalityNone}, ""},
		{`{"policy": "bestEffort","migrateIntervalMinutes":10}`, Locality{Policy: LocalityBestEffort, MigrateIntervalMinutes: 10}, ""},
		{`{"policy": "bestEffort","migrateIntervalMinutes":0}`, Locality{Policy: LocalityBestEffort}, ""},
		{`{"policy": "always"}`, Locality{}, `koordinator.sh/memoryLocality.policy: "always" is not bestEffort or none`},
		{`{"policy": 1}`, Locality{}, "memoryLocality.policy: want a string"},
		{`{"migrateIntervalMinutes": 5}`, Locality{}, "memoryLocality.policy: missing"},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": -1}`, Locality{}, "memoryLocality.migrateIntervalMinutes: want a whole number"},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": 1.5}`, Locality{}, "migrateIntervalMinutes"},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": "10"}`, Locality{}, "migrateIntervalMinutes"},
		// The seed: migrateIntervalMinutes "none" turns memory locality off.
		{`{"policy": "bestEffort", "migrateIntervalMinutes": "none"}`, Locality{Policy: LocalityNone}, ""},
		{`{"policy": "BestEffort", "migrateIntervalMinutes": "None"}`, Locality{Policy: LocalityNone}, ""},
		{`{"migrateIntervalMinutes": "none"}`, Locality{Policy: LocalityNone}, ""},
		{`{"policy": "often", "migrateIntervalMinutes": "none"}`, Locality{}, `policy: "often" is not bestEffort or none`},
		{`{"policy": "bestEffort", "migrateIntervalMinutes": "never"}`, Locality{}, `or "none", got`},
		{`{"policy": "bestEffort", "interval": 10}`, Locality{}, `unknown field "interval"`},
		{`bestEffort`, Locality{}, "is not a JSON object"},
		{`null`, Locality{}, "is not a JSON object"},
	}
	for _, tc := range tests {
		got, err := ParseLocalityAnnotation(tc.value, "koordinator.sh/memoryLocality")
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

func TestParseLocalities(t *testing.T) {
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
	got, err := localities(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Locality{"lsClass": {Policy: LocalityBestEffort}, "lsrClass": {Policy: LocalityNone}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	yamlRaw := "clusterStrategy:\n  lsClass:\n    memoryLocality:\n      policy: BestEffort\n      migrateIntervalMinutes: 30\n"
	if got, err := localities(yamlRaw); err != nil || got["lsClass"] != (Locality{Policy: LocalityBestEffort, MigrateIntervalMinutes: 30}) {
		t.Errorf("yaml: got %+v, %v", got, err)
	}
	if got, err := localities("  "); err != nil || len(got) != 0 {
		t.Errorf("blank: got %+v, %v", got, err)
	}
	for _, tc := range []struct{ raw, want string }{
		{`{"clusterStrategy": {"lsClass": {"memoryLocality": {"policy": "on"}}}}`, `clusterStrategy.lsClass.memoryLocality.policy: "on" is not bestEffort or none`},
		{`{"clusterStrategy": {"beClass": {"memoryLocality": "bestEffort"}}}`, "clusterStrategy.beClass.memoryLocality: want an object"},
		{`{"clusterStrategy": {"lsClass": {"memoryLocality": {"policy": "bestEffort", "x": 1}}}}`, `clusterStrategy.lsClass.memoryLocality: unknown field "x"`},
		{`[1]`, "resource-qos-config"},
		{`{"clusterStrategy": `, "resource-qos-config"},
	} {
		if _, err := localities(tc.raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.raw, err, tc.want)
		}
	}
}

// localities are the memoryLocality sections of a resource-qos-config
// value's clusterStrategy.
func localities(raw string) (map[string]Locality, error) {
	r, err := ParseResourceQoS(raw)
	return r.Cluster.Locality, err
}

func TestResolveAndDue(t *testing.T) {
	be, none := Locality{Policy: LocalityBestEffort}, Locality{Policy: LocalityNone}
	if ResolveLocality(&none, &be) != none || ResolveLocality(nil, &be) != be || ResolveLocality(nil, nil).Policy != LocalityNone {
		t.Error("annotation must win over class config, and nothing means off")
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	every10 := Locality{Policy: LocalityBestEffort, MigrateIntervalMinutes: 10}
	tests := []struct {
		s    Locality
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

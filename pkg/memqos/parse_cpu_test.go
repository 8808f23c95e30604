package memqos

import (
	"strings"
	"testing"
)

func TestParseCPUQOS(t *testing.T) {
	cfg, err := ParseResourceQoSConfig(`{"clusterStrategy": {
		"lsClass": {"cpuQOS": {"enable": true, "groupIdentity": 2, "coreExpeller": true}},
		"beClass": {"cpuQOS": {"enable": true, "groupIdentity": -1, "schedIdle": 1}, "memoryQOS": {"enable": true}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	ls, be := cfg.CPU.LS, cfg.CPU.BE
	if ls == nil || !*ls.Enable || *ls.GroupIdentity != 2 || !*ls.CoreExpeller || ls.SchedIdle != nil {
		t.Errorf("lsClass.cpuQOS = %+v", ls)
	}
	if be == nil || !*be.Enable || *be.GroupIdentity != -1 || *be.SchedIdle != 1 {
		t.Errorf("beClass.cpuQOS = %+v", be)
	}
	if cfg.BE == nil || cfg.LS != nil || cfg.CPU.LSR != nil || cfg.CPU.System != nil {
		t.Errorf("memory sections or other classes set: %+v", cfg)
	}
	// YAML, as the ConfigMap may hold it.
	cfg, err = ParseResourceQoSConfig("clusterStrategy:\n  beClass:\n    cpuQOS:\n      enable: false\n")
	if err != nil || cfg.CPU.BE == nil || *cfg.CPU.BE.Enable {
		t.Errorf("YAML: %+v, %v", cfg.CPU.BE, err)
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
		cfg, err := ParseResourceQoSConfig(tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.raw, err, tc.want)
		}
		if cfg.CPU.BE != nil || cfg.CPU.LS != nil || cfg.CPU.LSR != nil || cfg.BE != nil {
			t.Errorf("%s: a refused value still gave %+v", tc.raw, cfg)
		}
	}
	_, err := ParseResourceQoSConfig(`{"clusterStrategy": {"beClass": {"cpuQOS": {"coreExpeller": 1}, "memoryQOS": {"wmarkRatio": 101}}}}`)
	if err == nil || !strings.Contains(err.Error(), "memoryQOS.wmarkRatio: 101") {
		t.Errorf("both problems named: %v", err)
	}
}

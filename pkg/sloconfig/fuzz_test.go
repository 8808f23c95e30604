package sloconfig

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/memqos"
)

// Every value here is ConfigMap text every node agent reads, or pod text
// written by whoever may create a pod: the decoders must never panic, must
// answer in bounded time with a bounded message, and whatever they accept
// must be inside the documented ranges.

func inRange(t *testing.T, p memqos.Params) {
	t.Helper()
	check := func(name string, v *int64, lo, hi int64) {
		if v != nil && (*v < lo || *v > hi) {
			t.Fatalf("accepted %s = %d", name, *v)
		}
	}
	check("minLimitPercent", p.MinLimitPercent, 0, 100)
	check("lowLimitPercent", p.LowLimitPercent, 0, 100)
	check("throttlingPercent", p.ThrottlingPercent, 0, 100)
	check("wmarkRatio", p.WmarkRatio, 0, 100)
	check("wmarkMinAdj", p.WmarkMinAdj, -25, 50)
}

func checkStrategy(t *testing.T, s Strategy, raw string) {
	t.Helper()
	for _, cc := range []*memqos.ClassConfig{s.MemQoS.LSR, s.MemQoS.LS, s.MemQoS.BE, s.MemQoS.System} {
		if cc != nil {
			inRange(t, cc.Params)
		}
	}
	for _, cc := range []*cpuqos.ClassConfig{s.CPUQoS.LSR, s.CPUQoS.LS, s.CPUQoS.BE, s.CPUQoS.System} {
		if cc == nil {
			continue
		}
		if v := cc.GroupIdentity; v != nil && (*v < -1 || *v > 2) {
			t.Fatalf("accepted groupIdentity = %d", *v)
		}
		if v := cc.SchedIdle; v != nil && (*v < 0 || *v > 1) {
			t.Fatalf("accepted schedIdle = %d", *v)
		}
	}
	for class, l := range s.Locality {
		checkLocality(t, l)
		if len(s.Locality) > strings.Count(raw, "memoryLocality") {
			t.Fatalf("class %q from nowhere", class)
		}
	}
}

func FuzzParseResourceQoS(f *testing.F) {
	f.Add(`{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 100}}}}`)
	f.Add(`{"clusterStrategy": {"beClass": {"memoryQOS": {"wmarkMinAdj": -25, "wmarkRatio": 95}, "cpuQOS": {}}}}`)
	f.Add("clusterStrategy:\n  lsrClass:\n    memoryQOS:\n      throttlingPercent: 80\n")
	f.Add(`{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": "yes", "wmarkRatio": 1e2}}}}`)
	f.Add(`[`)
	f.Add(`{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": true, "groupIdentity": -1, "schedIdle": 1, "coreExpeller": false}}}}`)
	f.Add("clusterStrategy:\n  lsClass:\n    cpuQOS:\n      groupIdentity: 7\n")
	f.Add(`{"clusterStrategy": {"lsClass": {"memoryLocality": {"policy": "bestEffort"}}, "beClass": {"cpuQOS": {}}}}`)
	f.Add("clusterStrategy:\n  beClass:\n    memoryLocality:\n      policy: none\n      migrateIntervalMinutes: 5\n")
	f.Add(`{"clusterStrategy": {"beClass": {"memoryQOS": {"enable": true}}}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": {"throttlingPercent": 50}}}]}`)
	f.Add(`{"nodeStrategies": [{"name": "x", "nodeSelector": {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["a"]}]}, "lsClass": {"memoryLocality": {"policy": "none"}}}]}`)
	f.Add("nodeStrategies:\n- nodeSelector: {matchLabels: {pool: big}}\n  beClass: {memoryQOS: {enable: true}}\n")
	f.Add(`{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": ` + strings.Repeat(`{"a":`, 100) + strings.Repeat(`}`, 100) + `}]}`)
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string {
		return `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": ` + s + `}}}}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": true, "groupIdentity": ` + s + `}}}}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"clusterStrategy": {"lsClass": {"memoryLocality": {"policy": ` + strconv.Quote(s) + `}}}}`
	})
	fuzzseed.Add(f, func(s string) string { return `{"clusterStrategy": {"lsClass": {"memoryLocality": ` + s + `}}}` })
	fuzzseed.Add(f, func(s string) string {
		return `{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": ` + s + `}}]}`
	})
	fuzzseed.Add(f, func(s string) string { return `{"nodeStrategies": ` + s + `}` })
	f.Fuzz(func(t *testing.T, raw string) {
		var r ResourceQoS
		var err error
		fuzzseed.Timed(t, "ParseResourceQoS", func() { r, err = ParseResourceQoS(raw) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		checkStrategy(t, r.Cluster, raw)
		if len(r.Nodes) > MaxNodeStrategies {
			t.Fatalf("%d entries accepted", len(r.Nodes))
		}
		for _, n := range r.Nodes {
			checkStrategy(t, n.Value, raw)
			if len(n.Name) > 63+len("nodeStrategies[]")+2 {
				t.Fatalf("entry name %q is not bounded", n.Name)
			}
		}
		// Accepted is accepted on every node: each entry was checked, and
		// picking one only matches labels.
		for _, labels := range []map[string]string{nil, {"pool": "big"}} {
			s, name := r.ForNode(labels)
			if name == "" && s.MemQoS != r.Cluster.MemQoS {
				t.Fatalf("no entry in force, yet not clusterStrategy")
			}
		}
	})
}

func FuzzParseNamespaces(f *testing.F) {
	f.Add(`{"enabledNamespaces": ["allow-ns"], "disabledNamespaces": ["block-ns"]}`)
	f.Add("enabledNamespaces: [a, b]\n")
	f.Add(`{"enabledNamespaces": [1]}`)
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return `{"enabledNamespaces": [` + strconv.Quote(s) + `]}` })
	f.Fuzz(func(t *testing.T, raw string) {
		var nc memqos.NamespaceConfig
		var err error
		fuzzseed.Timed(t, "ParseNamespaces", func() { nc, err = ParseNamespaces(raw) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		for _, e := range nc.Enabled {
			for _, d := range nc.Disabled {
				if e == d {
					t.Fatalf("namespace %q accepted in both lists", e)
				}
			}
		}
	})
}

func FuzzParseMemoryQOSAnnotation(f *testing.F) {
	f.Add(`{"policy": "auto"}`)
	f.Add(`{"policy": "NONE", "lowLimitPercent": 5}`)
	f.Add(`{policy: default, throttlingPercent: 80, wmarkRatio: 95}`)
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add(s)
		f.Add(`{"policy": ` + strconv.Quote(s) + `}`)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var ps memqos.PodSetting
		var err error
		fuzzseed.Timed(t, "ParseMemoryQOSAnnotation", func() { ps, err = ParseMemoryQOSAnnotation(raw) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		inRange(t, ps.Params)
		switch ps.Policy {
		case memqos.PolicyAuto, memqos.PolicyDefault, memqos.PolicyNone:
		default:
			t.Fatalf("accepted policy %q", ps.Policy)
		}
	})
}

// The cpuBurst annotation is pod text, written by whoever may create a pod.
func FuzzParseCPUBurstAnnotation(f *testing.F) {
	f.Add(`{"policy": "auto", "cpuBurstPercent": 1000}`)
	f.Add(`{"policy": "none"}`)
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return `{"policy": ` + s + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"cfsQuotaBurstPercent": ` + s + `}` })
	f.Fuzz(func(t *testing.T, raw string) {
		var c cpuburst.Config
		var err error
		fuzzseed.Timed(t, "ParseCPUBurstAnnotation", func() { c, err = ParseCPUBurstAnnotation(raw, "annotation") })
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
func FuzzParseCPUBurst(f *testing.F) {
	f.Add(`{"clusterStrategy": {"policy": "auto"}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "cpuBurstPercent": 50}]}`)
	f.Add("clusterStrategy:\n  policy: cfsQuotaBurstOnly\n  cfsQuotaBurstPeriodSeconds: 30\n")
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return `{"clusterStrategy": ` + s + `}` })
	fuzzseed.Add(f, func(s string) string {
		return `{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "policy": ` + s + `}]}`
	})
	f.Fuzz(func(t *testing.T, raw string) {
		var b CPUBurst
		var err error
		fuzzseed.Timed(t, "ParseCPUBurst", func() { b, err = ParseCPUBurst(raw) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		for _, labels := range []map[string]string{nil, {"pool": "big"}} {
			s := cpuburst.Resolve(nil, b.ForNode(labels))
			if s.CPUBurstPercent < 0 || s.CPUBurstPercent > 10000 || s.CFSQuotaBurstPercent < 100 || s.SharePoolThresholdPercent > 100 {
				t.Fatalf("accepted out of range: %+v", s)
			}
		}
	})
}

func FuzzParseLocalityAnnotation(f *testing.F) {
	f.Add(`{"policy": "bestEffort", "migrateIntervalMinutes": 10}`)
	f.Add(`{"policy": "NONE", "migrateIntervalMinutes": 1e300}`)
	f.Add(`{"policy": "bestEffort", "migrateIntervalMinutes": "none"}`)
	fuzzseed.Add(f, func(s string) string { return `{"policy": ` + strconv.Quote(s) + `}` })
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, value string) {
		const key = "koordinator.sh/memoryLocality"
		var s Locality
		var err error
		fuzzseed.Timed(t, "ParseLocalityAnnotation", func() { s, err = ParseLocalityAnnotation(value, key) })
		fuzzseed.CheckError(t, err, key)
		if err != nil {
			return
		}
		checkLocality(t, s)
		raw, _ := json.Marshal(s)
		if !strings.Contains(string(raw), "policy") {
			raw = []byte(`{"policy": "` + string(s.Policy) + `"}`)
		}
		again, err := ParseLocalityAnnotation(string(raw), key)
		if err != nil || again != s {
			t.Fatalf("%+v writes %s, which reads back as %+v, %v", s, raw, again, err)
		}
	})
}

func checkLocality(t *testing.T, s Locality) {
	t.Helper()
	if (s.Policy != LocalityBestEffort && s.Policy != LocalityNone) || s.MigrateIntervalMinutes < 0 || s.MigrateIntervalMinutes > 1e6 {
		t.Fatalf("accepted %+v", s)
	}
	if s.Interval() < 0 {
		t.Fatalf("%+v: negative interval", s)
	}
}

package memqos

import (
	"strconv"
	"testing"

	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/fuzzseed"
)

// The parsers read untrusted ConfigMap and annotation text: they must never
// panic, and whatever they accept must be inside the documented ranges.

func inRange(t *testing.T, p Params) {
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

func FuzzParseResourceQoSConfig(f *testing.F) {
	f.Add(`{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 100}}}}`)
	f.Add(`{"clusterStrategy": {"beClass": {"memoryQOS": {"wmarkMinAdj": -25, "wmarkRatio": 95}, "cpuQOS": {}}}}`)
	f.Add("clusterStrategy:\n  lsrClass:\n    memoryQOS:\n      throttlingPercent: 80\n")
	f.Add(`{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": "yes", "wmarkRatio": 1e2}}}}`)
	f.Add(`[`)
	f.Add(`{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": true, "groupIdentity": -1, "schedIdle": 1, "coreExpeller": false}}}}`)
	f.Add("clusterStrategy:\n  lsClass:\n    cpuQOS:\n      groupIdentity: 7\n")
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string {
		return `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": ` + s + `}}}}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"clusterStrategy": {"beClass": {"cpuQOS": {"enable": true, "groupIdentity": ` + s + `}}}}`
	})
	f.Fuzz(func(t *testing.T, raw string) {
		var cfg Config
		var err error
		fuzzseed.Timed(t, "ParseResourceQoSConfig", func() { cfg, err = ParseResourceQoSConfig(raw) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		for _, cc := range []*ClassConfig{cfg.LSR, cfg.LS, cfg.BE, cfg.System} {
			if cc != nil {
				inRange(t, cc.Params)
			}
		}
		for _, cc := range []*cpuqos.ClassConfig{cfg.CPU.LSR, cfg.CPU.LS, cfg.CPU.BE, cfg.CPU.System} {
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
	})
}

func FuzzParseNamespaceConfig(f *testing.F) {
	f.Add(`{"enabledNamespaces": ["allow-ns"], "disabledNamespaces": ["block-ns"]}`)
	f.Add("enabledNamespaces: [a, b]\n")
	f.Add(`{"enabledNamespaces": [1]}`)
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return `{"enabledNamespaces": [` + strconv.Quote(s) + `]}` })
	f.Fuzz(func(t *testing.T, raw string) {
		var nc NamespaceConfig
		var err error
		fuzzseed.Timed(t, "ParseNamespaceConfig", func() { nc, err = ParseNamespaceConfig(raw) })
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

func FuzzDecideFromAnnotation(f *testing.F) {
	f.Add(`{"policy": "auto"}`, int64(100<<20), int64(200<<20))
	f.Add(`{"policy": "NONE", "lowLimitPercent": 5}`, int64(0), int64(0))
	f.Add(`{policy: default, throttlingPercent: 80, wmarkRatio: 95}`, int64(1), int64(1<<62))
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add(s, int64(1), int64(2))
		f.Add(`{"policy": `+strconv.Quote(s)+`}`, int64(1<<62), int64(0))
	}
	f.Fuzz(func(t *testing.T, ann string, request, limit int64) {
		var ps PodSetting
		var err error
		fuzzseed.Timed(t, "ParsePodSetting", func() { ps, err = ParsePodSetting(ann) })
		fuzzseed.CheckError(t, err)
		if err == nil {
			inRange(t, ps.Params)
		}
		w := Workload{KubeQoS: Burstable, Annotations: map[string]string{AnnotationMemoryQoS: ann},
			Containers: []Container{{Name: "c", RequestBytes: request, LimitBytes: limit}}}
		d, err := Decide(Config{}, NamespaceConfig{}, w, Options{})
		if err != nil {
			return
		}
		// Whatever is written stays within the container's own sizes.
		for _, s := range d.Containers[0].Settings {
			if s.Op == Restore || s.Knob == MemoryWmarkRatio || s.Knob == MemoryWmarkMinAdj {
				continue
			}
			if s.Value < 0 || (limit > 0 && s.Value > limit) || (limit == 0 && s.Value > request) {
				t.Fatalf("%s = %d outside request %d / limit %d", s.Knob, s.Value, request, limit)
			}
			if s.Knob == MemoryHigh && s.Value < request {
				t.Fatalf("memory.high %d below the request %d", s.Value, request)
			}
		}
	})
}

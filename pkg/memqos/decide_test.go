package memqos

import (
	"strings"
	"testing"
)

func mustConfig(t *testing.T, raw string) Config {
	t.Helper()
	cfg, err := ParseResourceQoSConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// classSources are the ways a workload gets its class, and the profile
// family each one lands in.
var classSources = []struct {
	name string
	w    Workload
	be   bool
}{
	{"label LS", Workload{Labels: map[string]string{LabelQoSClass: "LS"}}, false},
	{"legacy label ls", Workload{Labels: map[string]string{LegacyQoSClass: "ls"}}, false},
	{"legacy annotation BE", Workload{Annotations: map[string]string{LegacyQoSClass: "BE"}}, true},
	{"Kubernetes Burstable", Workload{KubeQoS: Burstable}, false},
	{"Kubernetes BestEffort", Workload{KubeQoS: BestEffort}, true},
}

func TestPrecedence(t *testing.T) {
	annotations := map[string]string{"-": "", "auto": `{"policy": "auto"}`, "none": `{"policy": "none"}`, "default": `{"policy": "default"}`}
	namespaces := map[string]NamespaceConfig{"-": {}, "enabled": {Enabled: []string{"ns"}}, "disabled": {Disabled: []string{"other", "ns"}}}
	classes := map[string]string{"-": `{}`,
		"true":  `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50}}, "beClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50}}}}`,
		"false": `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": false, "minLimitPercent": 50}}, "beClass": {"memoryQOS": {"enable": false, "minLimitPercent": 50}}}}`}
	// out: "recommended" / "class" profile in force, or "off"; then the source.
	rows := []struct{ ann, ns, class, out string }{
		{"-", "-", "-", "off/built-in default"}, {"-", "-", "true", "class/class config"}, {"-", "-", "false", "off/class config"},
		{"-", "enabled", "-", "recommended/namespace"}, {"-", "enabled", "true", "class/namespace"}, {"-", "enabled", "false", "class/namespace"},
		{"-", "disabled", "-", "off/namespace"}, {"-", "disabled", "true", "off/namespace"}, {"-", "disabled", "false", "off/namespace"},
		{"default", "-", "-", "off/built-in default"}, {"default", "-", "true", "class/class config"}, {"default", "-", "false", "off/class config"},
		{"default", "enabled", "-", "recommended/namespace"}, {"default", "enabled", "true", "class/namespace"}, {"default", "enabled", "false", "class/namespace"},
		{"default", "disabled", "-", "off/namespace"}, {"default", "disabled", "true", "off/namespace"}, {"default", "disabled", "false", "off/namespace"},
		{"auto", "-", "-", "recommended/annotation"}, {"auto", "-", "true", "recommended/annotation"}, {"auto", "-", "false", "recommended/annotation"},
		{"auto", "enabled", "-", "recommended/annotation"}, {"auto", "enabled", "true", "recommended/annotation"}, {"auto", "enabled", "false", "recommended/annotation"},
		{"auto", "disabled", "-", "recommended/annotation"}, {"auto", "disabled", "true", "recommended/annotation"}, {"auto", "disabled", "false", "recommended/annotation"},
		{"none", "-", "-", "off/annotation"}, {"none", "-", "true", "off/annotation"}, {"none", "-", "false", "off/annotation"},
		{"none", "enabled", "-", "off/annotation"}, {"none", "enabled", "true", "off/annotation"}, {"none", "enabled", "false", "off/annotation"},
		{"none", "disabled", "-", "off/annotation"}, {"none", "disabled", "true", "off/annotation"}, {"none", "disabled", "false", "off/annotation"},
	}
	for _, src := range classSources {
		for _, r := range rows {
			t.Run(src.name+"/"+r.ann+"/"+r.ns+"/"+r.class, func(t *testing.T) {
				w := src.w
				w.Namespace = "ns"
				w.Containers = []Container{{Name: "c", RequestBytes: 100, LimitBytes: 1000}}
				if r.ann != "-" {
					w.Annotations = map[string]string{AnnotationMemoryQoS: annotations[r.ann]}
					for k, v := range src.w.Annotations {
						w.Annotations[k] = v
					}
				}
				d, err := Decide(mustConfig(t, classes[r.class]), namespaces[r.ns], w, Options{})
				if err != nil {
					t.Fatal(err)
				}
				profile, source, _ := strings.Cut(r.out, "/")
				if string(d.Source) != source || d.Enabled != (profile != "off") {
					t.Fatalf("enabled %v from %q (%s), want %s", d.Enabled, d.Source, d.Reason, r.out)
				}
				checkSettings(t, d.Containers[0].Settings, profileWants(profile, src.be))
			})
		}
	}
}

// profileWants tells the three outcomes apart by the files they touch.
func profileWants(profile string, be bool) map[Knob]want {
	switch {
	case profile == "class": // table defaults + minLimitPercent 50
		return map[Knob]want{MemoryMin: {Write, 50}, MemoryLow: {Restore, 0}, MemoryHigh: {Restore, 0}, MemoryWmarkRatio: {Write, 95}}
	case profile == "recommended" && be: // the table defaults
		return map[Knob]want{MemoryMin: {Restore, 0}, MemoryLow: {Restore, 0}, MemoryHigh: {Restore, 0}, MemoryWmarkRatio: {Write, 95}, MemoryWmarkMinAdj: {Write, 50}}
	case profile == "recommended":
		return map[Knob]want{MemoryMin: {Restore, 0}, MemoryLow: {Restore, 0}, MemoryHigh: {Restore, 0}, MemoryWmarkRatio: {Write, 95}, MemoryWmarkMinAdj: {Write, -25}}
	}
	return map[Knob]want{MemoryMin: {Restore, 0}, MemoryLow: {Restore, 0}, MemoryHigh: {Restore, 0},
		MemoryWmarkRatio: {Restore, 0}, MemoryWmarkHigh: {Restore, 0}, MemoryWmarkMinAdj: {Restore, 0}}
}

func TestAnnotationParametersOverride(t *testing.T) {
	on := `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "wmarkRatio": 90}}}}`
	off := `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": false}}}}`
	cases := []struct {
		name, cfg, ann string
		ns             NamespaceConfig
		want           Profile // zero = disabled
	}{
		{"auto + explicit", off, `{"policy": "auto", "lowLimitPercent": 60, "wmarkMinAdj": 0}`, NamespaceConfig{},
			Profile{LowLimitPercent: 60, WmarkRatio: 95}},
		{"default + explicit over class", on, `{"throttlingPercent": 70}`, NamespaceConfig{},
			Profile{ThrottlingPercent: 70, WmarkRatio: 90, WmarkMinAdj: -25}},
		{"explicit over enabled namespace", off, `{"policy": "default", "minLimitPercent": 10}`, NamespaceConfig{Enabled: []string{"ns"}},
			Profile{MinLimitPercent: 10, WmarkRatio: 95, WmarkMinAdj: -25}},
		{"explicit parameters do not switch on", off, `{"lowLimitPercent": 60}`, NamespaceConfig{}, Profile{}},
		{"none ignores parameters", on, `{"policy": "none", "lowLimitPercent": 60}`, NamespaceConfig{}, Profile{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := Workload{Namespace: "ns", KubeQoS: Burstable, Annotations: map[string]string{AnnotationMemoryQoS: tc.ann}}
			d, err := Decide(mustConfig(t, tc.cfg), tc.ns, w, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Profile != tc.want || d.Enabled != (tc.want != Profile{}) {
				t.Errorf("profile %+v enabled %v (%s), want %+v", d.Profile, d.Enabled, d.Reason, tc.want)
			}
		})
	}
}

func TestClassResolution(t *testing.T) {
	lsOnly := `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true}}, "beClass": {"memoryQOS": {"enable": false}}}}`
	withLSR := `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": false}}, "lsrClass": {"memoryQOS": {"enable": true}},
		"systemClass": {"memoryQOS": {"enable": false}}}}`
	lbl := func(k, v string) map[string]string { return map[string]string{k: v} }
	cases := []struct {
		name, cfg string
		w         Workload
		class     Class
		from      string
		enabled   bool
	}{
		{"label LS", lsOnly, Workload{Labels: lbl(LabelQoSClass, "LS"), KubeQoS: BestEffort}, ClassLS, "label koordinator.sh/qosClass", true},
		{"label is case-insensitive", lsOnly, Workload{Labels: lbl(LabelQoSClass, "be")}, ClassBE, "label koordinator.sh/qosClass", false},
		{"new label wins over legacy", lsOnly, Workload{Labels: map[string]string{LabelQoSClass: "LS", LegacyQoSClass: "BE"}}, ClassLS, "label koordinator.sh/qosClass", true},
		{"legacy label", lsOnly, Workload{Labels: lbl(LegacyQoSClass, "BE"), KubeQoS: Burstable}, ClassBE, "label alibabacloud.com/qosClass", false},
		{"legacy annotation", lsOnly, Workload{Annotations: lbl(LegacyQoSClass, "LS"), KubeQoS: BestEffort}, ClassLS, "annotation alibabacloud.com/qosClass", true},
		{"empty label falls through", lsOnly, Workload{Labels: lbl(LabelQoSClass, ""), KubeQoS: Burstable}, ClassLS, "Kubernetes QoS Burstable", true},
		{"Burstable reads lsClass", lsOnly, Workload{KubeQoS: "burstable"}, ClassLS, "Kubernetes QoS burstable", true},
		{"BestEffort reads beClass", lsOnly, Workload{KubeQoS: BestEffort}, ClassBE, "Kubernetes QoS BestEffort", false},
		{"Guaranteed ignores lsClass", lsOnly, Workload{KubeQoS: Guaranteed}, ClassLS, "Kubernetes QoS Guaranteed", false},
		{"Guaranteed reads lsrClass", withLSR, Workload{KubeQoS: Guaranteed}, ClassLS, "Kubernetes QoS Guaranteed", true},
		{"labelled Guaranteed reads lsClass", withLSR, Workload{Labels: lbl(LabelQoSClass, "LS"), KubeQoS: Guaranteed}, ClassLS, "label koordinator.sh/qosClass", false},
		{"LSR reads lsrClass", withLSR, Workload{Labels: lbl(LabelQoSClass, "LSR")}, ClassLSR, "label koordinator.sh/qosClass", true},
		{"LSE reads lsrClass", withLSR, Workload{Labels: lbl(LabelQoSClass, "LSE")}, ClassLSE, "label koordinator.sh/qosClass", true},
		{"LSR falls back to lsClass", lsOnly, Workload{Labels: lbl(LabelQoSClass, "LSR")}, ClassLSR, "label koordinator.sh/qosClass", true},
		{"SYSTEM reads systemClass", withLSR, Workload{Labels: lbl(LabelQoSClass, "SYSTEM")}, ClassSystem, "label koordinator.sh/qosClass", false},
		{"SYSTEM falls back to lsClass", lsOnly, Workload{Labels: lbl(LabelQoSClass, "system")}, ClassSystem, "label koordinator.sh/qosClass", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(mustConfig(t, tc.cfg), NamespaceConfig{}, tc.w, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Class != tc.class || d.ClassFrom != tc.from || d.Enabled != tc.enabled {
				t.Errorf("class %s from %q enabled %v (%s), want %s from %q enabled %v",
					d.Class, d.ClassFrom, d.Enabled, d.Reason, tc.class, tc.from, tc.enabled)
			}
		})
	}
}

func TestGuaranteedAutoUsesLSProfile(t *testing.T) {
	w := Workload{KubeQoS: Guaranteed, Annotations: map[string]string{AnnotationMemoryQoS: `{"policy":"auto"}`}}
	d, err := Decide(Config{}, NamespaceConfig{}, w, Options{})
	if err != nil || d.Profile != Recommended(false) {
		t.Fatalf("%+v, %v", d.Profile, err)
	}
}

func TestLegacyMemoryQoSAnnotation(t *testing.T) {
	enabled := `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true}}}}`
	cases := []struct {
		name    string
		ann     map[string]string
		enabled bool
		reason  string
	}{
		{"legacy auto", map[string]string{LegacyAnnotationMemoryQoS: `{"policy":"auto"}`}, true, "annotation alibabacloud.com/memoryQOS sets policy auto"},
		{"legacy none", map[string]string{LegacyAnnotationMemoryQoS: `{"policy":"None"}`}, false, "annotation alibabacloud.com/memoryQOS sets policy none"},
		{"new none beats legacy auto", map[string]string{AnnotationMemoryQoS: `{"policy":"none"}`, LegacyAnnotationMemoryQoS: `{"policy":"auto"}`},
			false, "annotation koordinator.sh/memoryQOS sets policy none"},
		{"new default beats legacy none", map[string]string{AnnotationMemoryQoS: `{"policy":"default"}`, LegacyAnnotationMemoryQoS: `{"policy":"none"}`},
			true, "clusterStrategy.lsClass.memoryQOS.enable is true"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(mustConfig(t, enabled), NamespaceConfig{}, Workload{KubeQoS: Burstable, Annotations: tc.ann}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Enabled != tc.enabled || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("enabled %v (%s), want %v (%s)", d.Enabled, d.Reason, tc.enabled, tc.reason)
			}
		})
	}
}

func TestDecideErrors(t *testing.T) {
	cases := []struct {
		name string
		w    Workload
		err  string
	}{
		{"malformed annotation", Workload{KubeQoS: Burstable, Annotations: map[string]string{AnnotationMemoryQoS: `{"policy":`}},
			"annotation koordinator.sh/memoryQOS: malformed JSON"},
		{"bad legacy annotation", Workload{KubeQoS: Burstable, Annotations: map[string]string{LegacyAnnotationMemoryQoS: `{"policy":"yes"}`}},
			`annotation alibabacloud.com/memoryQOS: policy: "yes" is not one of auto, default, none`},
		{"bad parameter", Workload{KubeQoS: Burstable, Annotations: map[string]string{AnnotationMemoryQoS: `{"wmarkMinAdj": -30}`}},
			"annotation koordinator.sh/memoryQOS: wmarkMinAdj: -30 is out of range -25..50"},
		{"unknown class", Workload{Labels: map[string]string{LabelQoSClass: "GOLD"}}, `label koordinator.sh/qosClass: "GOLD" is not one of`},
		{"unknown legacy class", Workload{Annotations: map[string]string{LegacyQoSClass: "x"}}, `annotation alibabacloud.com/qosClass: "x"`},
		{"no class", Workload{}, "no QoS class"},
		{"unknown Kubernetes class", Workload{KubeQoS: "Premium"}, `Kubernetes QoS class "Premium"`},
		{"negative request", Workload{KubeQoS: Burstable, Containers: []Container{{Name: "a", RequestBytes: -1}}}, `container "a": memory request -1 is negative`},
		{"negative limit", Workload{KubeQoS: Burstable, Containers: []Container{{Name: "a", LimitBytes: -1}}}, `container "a": memory limit -1 is negative`},
		{"request above limit", Workload{KubeQoS: Burstable, Containers: []Container{{Name: "a", RequestBytes: 2, LimitBytes: 1}}}, "exceeds the limit 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decide(Config{}, NamespaceConfig{}, tc.w, Options{}); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestDisabledRestoresEverything(t *testing.T) {
	w := Workload{KubeQoS: Burstable, Annotations: map[string]string{AnnotationMemoryQoS: `{"policy":"none"}`},
		Containers: []Container{{Name: "a", RequestBytes: 1, LimitBytes: 2}, {Name: "b"}}}
	d, err := Decide(Config{}, NamespaceConfig{}, w, Options{V1SoftLimitForLow: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Containers) != 2 || d.Containers[1].Name != "b" || len(d.Containers[0].Settings) != 7 || len(d.Pod) != 5 {
		t.Fatalf("shape: %+v", d)
	}
	for _, s := range append(append(Settings{}, d.Pod...), d.Containers[0].Settings...) {
		if s.Op != Restore || s.Why != d.Reason {
			t.Errorf("%s: %s (%s), want restore (%s)", s.Knob, s.Op, s.Why, d.Reason)
		}
	}
}

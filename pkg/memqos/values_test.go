package memqos

import (
	"strings"
	"testing"
)

// classSources are the ways a workload gets its class, and the profile
// family each one lands in (pkg/workload reads each from its text).
var classSources = []struct {
	name string
	w    Workload
	be   bool
}{
	{"label LS", labelled(ClassLS), false},
	{"label BE", labelled(ClassBE), true},
	{"Kubernetes Burstable", unlabelled(Burstable), false},
	{"Kubernetes BestEffort", unlabelled(BestEffort), true},
}

func TestPrecedence(t *testing.T) {
	annotations := map[string]*PodSetting{"-": nil, "auto": {Policy: PolicyAuto}, "none": {Policy: PolicyNone}, "default": {Policy: PolicyDefault}}
	namespaces := map[string]NamespaceConfig{"-": {}, "enabled": {Enabled: []string{"ns"}}, "disabled": {Disabled: []string{"other", "ns"}}}
	classes := map[string]Config{"-": {},
		"true":  {LS: class(on, Params{MinLimitPercent: p(50)}), BE: class(on, Params{MinLimitPercent: p(50)})},
		"false": {LS: class(off, Params{MinLimitPercent: p(50)}), BE: class(off, Params{MinLimitPercent: p(50)})}}
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
				if ps := annotations[r.ann]; ps != nil {
					w = annotated(w, ps.Policy, ps.Params)
				}
				d, err := Compute(classes[r.class], namespaces[r.ns], w, Options{})
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
	enabled := Config{LS: class(on, Params{WmarkRatio: p(90)})}
	disabled := Config{LS: class(off, Params{})}
	cases := []struct {
		name   string
		cfg    Config
		policy Policy
		params Params
		ns     NamespaceConfig
		want   Profile // zero = disabled
	}{
		{"auto + explicit", disabled, PolicyAuto, Params{LowLimitPercent: p(60), WmarkMinAdj: p(0)}, NamespaceConfig{},
			Profile{LowLimitPercent: 60, WmarkRatio: 95}},
		{"default + explicit over class", enabled, "", Params{ThrottlingPercent: p(70)}, NamespaceConfig{},
			Profile{ThrottlingPercent: 70, WmarkRatio: 90, WmarkMinAdj: -25}},
		{"explicit over enabled namespace", disabled, PolicyDefault, Params{MinLimitPercent: p(10)}, NamespaceConfig{Enabled: []string{"ns"}},
			Profile{MinLimitPercent: 10, WmarkRatio: 95, WmarkMinAdj: -25}},
		{"explicit parameters do not switch on", disabled, "", Params{LowLimitPercent: p(60)}, NamespaceConfig{}, Profile{}},
		{"none ignores parameters", enabled, PolicyNone, Params{LowLimitPercent: p(60)}, NamespaceConfig{}, Profile{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := annotated(unlabelled(Burstable), tc.policy, tc.params)
			w.Namespace = "ns"
			d, err := Compute(tc.cfg, tc.ns, w, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Profile != tc.want || d.Enabled != (tc.want != Profile{}) {
				t.Errorf("profile %+v enabled %v (%s), want %+v", d.Profile, d.Enabled, d.Reason, tc.want)
			}
		})
	}
}

// TestClassSections: which memoryQOS section governs each class.
func TestClassSections(t *testing.T) {
	lsOnly := Config{LS: class(on, Params{}), BE: class(off, Params{})}
	withLSR := Config{LS: class(off, Params{}), LSR: class(on, Params{}), System: class(off, Params{})}
	cases := []struct {
		name    string
		cfg     Config
		w       Workload
		enabled bool
		reason  string
	}{
		{"LS reads lsClass", lsOnly, labelled(ClassLS), true, "clusterStrategy.lsClass.memoryQOS.enable is true"},
		{"BE reads beClass", lsOnly, labelled(ClassBE), false, "clusterStrategy.beClass.memoryQOS.enable is false"},
		{"Burstable reads lsClass", lsOnly, unlabelled(Burstable), true, "lsClass"},
		{"BestEffort reads beClass", lsOnly, unlabelled(BestEffort), false, "beClass"},
		{"Guaranteed ignores lsClass", lsOnly, unlabelled(Guaranteed), false, "Guaranteed pod without a class label and no clusterStrategy.lsrClass.memoryQOS"},
		{"Guaranteed reads lsrClass", withLSR, unlabelled(Guaranteed), true, "lsrClass"},
		{"labelled Guaranteed reads lsClass", withLSR, labelled(ClassLS), false, "lsClass"},
		{"LSR reads lsrClass", withLSR, labelled(ClassLSR), true, "lsrClass"},
		{"LSE reads lsrClass", withLSR, labelled(ClassLSE), true, "lsrClass"},
		{"LSR falls back to lsClass", lsOnly, labelled(ClassLSR), true, "lsClass"},
		{"SYSTEM reads systemClass", withLSR, labelled(ClassSystem), false, "systemClass"},
		{"SYSTEM falls back to lsClass", lsOnly, labelled(ClassSystem), true, "lsClass"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Compute(tc.cfg, NamespaceConfig{}, tc.w, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Class != tc.w.Class || d.ClassFrom != tc.w.ClassFrom || d.Enabled != tc.enabled || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("class %s from %q enabled %v (%s), want %s from %q enabled %v (%s)",
					d.Class, d.ClassFrom, d.Enabled, d.Reason, tc.w.Class, tc.w.ClassFrom, tc.enabled, tc.reason)
			}
		})
	}
}

func TestGuaranteedAutoUsesLSProfile(t *testing.T) {
	w := annotated(unlabelled(Guaranteed), PolicyAuto, Params{})
	d, err := Compute(Config{}, NamespaceConfig{}, w, Options{})
	if err != nil || d.Profile != Recommended(false) {
		t.Fatalf("%+v, %v", d.Profile, err)
	}
}

// TestReasonNamesTheAnnotation: the reason says which key's policy decided.
func TestReasonNamesTheAnnotation(t *testing.T) {
	w := annotated(unlabelled(Burstable), PolicyNone, Params{})
	w.PodKey = "alibabacloud.com/memoryQOS"
	d, err := Compute(Config{LS: class(on, Params{})}, NamespaceConfig{}, w, Options{})
	if err != nil || d.Enabled || d.Reason != "annotation alibabacloud.com/memoryQOS sets policy none" {
		t.Fatalf("enabled %v (%s), %v", d.Enabled, d.Reason, err)
	}
	w = annotated(unlabelled(Burstable), PolicyDefault, Params{LowLimitPercent: p(10)})
	d, _ = Compute(Config{LS: class(on, Params{})}, NamespaceConfig{}, w, Options{})
	if !d.Enabled || d.Reason != "clusterStrategy.lsClass.memoryQOS.enable is true, with parameters from annotation koordinator.sh/memoryQOS" {
		t.Fatalf("enabled %v (%s)", d.Enabled, d.Reason)
	}
}

func TestComputeErrors(t *testing.T) {
	burstable := func(cs ...Container) Workload {
		w := unlabelled(Burstable)
		w.Containers = cs
		return w
	}
	cases := []struct {
		name string
		w    Workload
		err  string
	}{
		{"no class", Workload{}, `class "" is not one of LSE, LSR, LS, BE, SYSTEM`},
		{"unknown class", Workload{Class: "GOLD"}, `class "GOLD" is not one of`},
		{"negative request", burstable(Container{Name: "a", RequestBytes: -1}), `container "a": memory request -1 is negative`},
		{"negative limit", burstable(Container{Name: "a", LimitBytes: -1}), `container "a": memory limit -1 is negative`},
		{"request above limit", burstable(Container{Name: "a", RequestBytes: 2, LimitBytes: 1}), "exceeds the limit 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Compute(Config{}, NamespaceConfig{}, tc.w, Options{}); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestDisabledRestoresEverything(t *testing.T) {
	w := annotated(unlabelled(Burstable), PolicyNone, Params{})
	w.Containers = []Container{{Name: "a", RequestBytes: 1, LimitBytes: 2}, {Name: "b"}}
	d, err := Compute(Config{}, NamespaceConfig{}, w, Options{V1SoftLimitForLow: true})
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

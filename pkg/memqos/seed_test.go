package memqos

import "testing"

// guaranteed100 is what a user writes for the worked examples: only limits
// set, so Kubernetes makes request = limit = 100 MiB and the pod
// Guaranteed; policy and params are its memoryQOS annotation.
func guaranteed100(policy Policy, params Params) Workload {
	w := annotated(unlabelled(Guaranteed), policy, params)
	w.Namespace = "ns"
	w.Containers = []Container{{Name: "app", RequestBytes: 100 * mib, LimitBytes: 100 * mib}}
	return w
}

// The protocol's worked examples hold on a pod whose request equals its limit.
func TestSeedWorkedExamplesOnRequestEqualsLimit(t *testing.T) {
	d, err := Compute(Config{}, NamespaceConfig{}, guaranteed100(PolicyAuto, Params{ThrottlingPercent: p(80), MinLimitPercent: p(100)}), Options{})
	if err != nil || !d.Enabled {
		t.Fatalf("enabled %v, err %v", d.Enabled, err)
	}
	checkSettings(t, d.Containers[0].Settings, map[Knob]want{
		MemoryMin: {Write, 104857600}, MemoryHigh: {Write, 83886080}, MemoryWmarkRatio: {Write, 95},
		MemoryWmarkHigh: {Expect, 79691776}, MemoryWmarkMinAdj: {Write, -25}})
}

// ThrottleNotBelowRequest is Locus's opt-in: it keeps memory.high out of the
// request, which for request = limit leaves the file alone.
func TestThrottleNotBelowRequestIsOptIn(t *testing.T) {
	w := guaranteed100(PolicyAuto, Params{ThrottlingPercent: p(80)})
	d, _ := Compute(Config{}, NamespaceConfig{}, w, Options{ThrottleNotBelowRequest: true})
	checkSettings(t, d.Containers[0].Settings, map[Knob]want{MemoryHigh: {Restore, 0}, MemoryWmarkHigh: {Expect, 99614720}})
	w.Containers[0].RequestBytes = 50 * mib
	d, _ = Compute(Config{}, NamespaceConfig{}, w, Options{ThrottleNotBelowRequest: true})
	checkSettings(t, d.Containers[0].Settings, map[Knob]want{MemoryHigh: {Write, 83886080}})
	w.Containers[0].RequestBytes = 90 * mib
	d, _ = Compute(Config{}, NamespaceConfig{}, w, Options{ThrottleNotBelowRequest: true})
	checkSettings(t, d.Containers[0].Settings, map[Knob]want{MemoryHigh: {Write, 90 * mib}})
}

// policy auto is the documented defaults, each overridable by the pod.
func TestAutoIsTheRecommendedParameters(t *testing.T) {
	for _, c := range []struct {
		class Class
		adj   int64
	}{{ClassLS, -25}, {ClassBE, 50}} {
		w := guaranteed100(PolicyAuto, Params{})
		w.Class, w.ClassFrom, w.Guaranteed = c.class, "label koordinator.sh/qosClass", false
		d, _ := Compute(Config{}, NamespaceConfig{}, w, Options{})
		if want := (Profile{WmarkRatio: 95, WmarkMinAdj: c.adj}); d.Profile != want {
			t.Errorf("%s auto: %+v, want %+v", c.class, d.Profile, want)
		}
		checkSettings(t, d.Containers[0].Settings, map[Knob]want{MemoryMin: {Restore, 0}, MemoryLow: {Restore, 0},
			MemoryHigh: {Restore, 0}, MemoryWmarkHigh: {Expect, 99614720}})
	}
}

// policy auto replaces the class's memoryQOS parameters with the recommended
// ones, as ack-koordinator's agent does: an LS pod on a cluster whose lsClass
// throttles at 80 % keeps memory.high at max, and only the pod's own
// parameters go on top.
func TestAutoReplacesTheClassParameters(t *testing.T) {
	cfg := Config{LS: class(on, Params{ThrottlingPercent: p(80), LowLimitPercent: p(50)})}
	w := annotated(labelled(ClassLS), PolicyAuto, Params{})
	w.Namespace = "ns"
	w.Containers = []Container{{Name: "app", RequestBytes: 50 * mib, LimitBytes: 100 * mib}}
	d, err := Compute(cfg, NamespaceConfig{}, w, Options{})
	if err != nil || !d.Enabled || d.Source != FromAnnotation || d.Profile != Recommended(false) {
		t.Fatalf("profile %+v enabled %v from %s (%s), %v; want the recommended LS profile", d.Profile, d.Enabled, d.Source, d.Reason, err)
	}
	checkSettings(t, d.Containers[0].Settings, map[Knob]want{MemoryLow: {Restore, 0}, MemoryHigh: {Restore, 0},
		MemoryWmarkHigh: {Expect, 99614720}, MemoryWmarkMinAdj: {Write, -25}})
	w.Pod.Params = Params{ThrottlingPercent: p(90)}
	d, _ = Compute(cfg, NamespaceConfig{}, w, Options{})
	checkSettings(t, d.Containers[0].Settings, map[Knob]want{MemoryLow: {Restore, 0}, MemoryHigh: {Write, 94371840}})
}

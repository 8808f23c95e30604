package memqos

import "testing"

// FuzzCompute: whatever parameters the text carried (each read within its
// range, pkg/sloconfig's fuzz targets hold that) and whatever sizes, what
// is written stays within the container's own sizes, and with
// ThrottleNotBelowRequest memory.high never throttles inside the request.
func FuzzCompute(f *testing.F) {
	f.Add(uint8(0), int64(50), int64(80), int64(95), int64(-25), int64(100<<20), int64(200<<20), false)
	f.Add(uint8(1), int64(0), int64(100), int64(0), int64(50), int64(0), int64(0), true)
	f.Add(uint8(2), int64(100), int64(1), int64(100), int64(0), int64(1), int64(1<<62), false)
	f.Add(uint8(0), int64(0), int64(80), int64(95), int64(0), int64(90), int64(100), true)
	f.Fuzz(func(t *testing.T, policy uint8, low, throttling, ratio, adj, request, limit int64, notBelow bool) {
		clamp := func(v, lo, hi int64) int64 { return min(max(v, lo), hi) }
		pol := []Policy{PolicyAuto, PolicyDefault, PolicyNone}[policy%3]
		params := Params{MinLimitPercent: p(clamp(low, 0, 100)), LowLimitPercent: p(clamp(low, 0, 100)),
			ThrottlingPercent: p(clamp(throttling, 0, 100)), WmarkRatio: p(clamp(ratio, 0, 100)), WmarkMinAdj: p(clamp(adj, -25, 50))}
		w := annotated(unlabelled(Burstable), pol, params)
		w.Containers = []Container{{Name: "c", RequestBytes: request, LimitBytes: limit}}
		d, err := Compute(Config{LS: class(on, Params{})}, NamespaceConfig{}, w, Options{ThrottleNotBelowRequest: notBelow})
		if err != nil {
			return
		}
		for _, s := range d.Containers[0].Settings {
			if s.Op == Restore || s.Knob == MemoryWmarkRatio || s.Knob == MemoryWmarkMinAdj {
				continue
			}
			if s.Value < 0 || (limit > 0 && s.Value > limit) || (limit == 0 && s.Value > request) {
				t.Fatalf("%s = %d outside request %d / limit %d", s.Knob, s.Value, request, limit)
			}
			if notBelow && s.Knob == MemoryHigh && s.Value < request {
				t.Fatalf("memory.high %d below the request %d", s.Value, request)
			}
		}
	})
}

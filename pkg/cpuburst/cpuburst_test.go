package cpuburst

import (
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// TestResolve: the pod's fields win over the node strategy's, which win
// over the protocol's defaults, field by field.
func TestResolve(t *testing.T) {
	node := NodeConfig{Strategy: Config{Policy: ptr(Auto), CPUBurstPercent: ptr[int64](200), SharePoolThresholdPercent: ptr[int64](70)}, Source: "big-nodes"}
	for _, tc := range []struct {
		name string
		own  *Config
		node NodeConfig
		want Settings
	}{
		{"defaults", nil, NodeConfig{}, Settings{Policy: None, CPUBurstPercent: 1000, CFSQuotaBurstPercent: 300, CFSQuotaBurstPeriodSeconds: -1, SharePoolThresholdPercent: 50, From: "defaults"}},
		{"node strategy", nil, node, Settings{Policy: Auto, CPUBurstPercent: 200, CFSQuotaBurstPercent: 300, CFSQuotaBurstPeriodSeconds: -1, SharePoolThresholdPercent: 70, From: "big-nodes"}},
		{"annotation over node", &Config{Policy: ptr(CPUBurstOnly), CFSQuotaBurstPeriodSeconds: ptr[int64](30)}, node,
			Settings{Policy: CPUBurstOnly, CPUBurstPercent: 200, CFSQuotaBurstPercent: 300, CFSQuotaBurstPeriodSeconds: 30, SharePoolThresholdPercent: 70, From: "annotation over big-nodes"}},
		{"annotation none turns it off", &Config{Policy: ptr(None)}, node,
			Settings{Policy: None, CPUBurstPercent: 200, CFSQuotaBurstPercent: 300, CFSQuotaBurstPeriodSeconds: -1, SharePoolThresholdPercent: 70, From: "annotation over big-nodes"}},
		{"annotation over defaults", &Config{CPUBurstPercent: ptr[int64](50)}, NodeConfig{},
			Settings{Policy: None, CPUBurstPercent: 50, CFSQuotaBurstPercent: 300, CFSQuotaBurstPeriodSeconds: -1, SharePoolThresholdPercent: 50, From: "annotation over defaults"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Resolve(tc.own, tc.node); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPolicies(t *testing.T) {
	for _, tc := range []struct {
		p             Policy
		buffer, raise bool
	}{{Auto, true, true}, {CPUBurstOnly, true, false}, {CFSQuotaBurst, false, true}, {None, false, false}} {
		s := Settings{Policy: tc.p}
		if s.BurstBuffer() != tc.buffer || s.QuotaBurst() != tc.raise {
			t.Errorf("%s: buffer %v raise %v, want %v %v", tc.p, s.BurstBuffer(), s.QuotaBurst(), tc.buffer, tc.raise)
		}
	}
}

// TestBurstUS: limit x cpuBurstPercent over a 100 ms period, never above
// the quota the limit gives (the kernel refuses a burst above the quota).
func TestBurstUS(t *testing.T) {
	for _, tc := range []struct {
		limit, percent, want int64
	}{
		{2000, 50, 100_000},                  // 2 CPUs x 50 % x 100 ms
		{2000, 100, 200_000},                 // = the quota
		{2000, 1000, 200_000},                // 1000 % is capped at the quota
		{500, 30, 15_000},                    // half a CPU
		{5, 100, 500},                        // 5m: 500us, below the kubelet's 1000us minimum quota
		{5, 1000, 1000},                      // capped at that minimum quota
		{0, 100, 0},                          // no limit: nothing to burst over
		{2000, 0, 0},                         // 0 %: no buffer
		{100_000_000, 10000, 10_000_000_000}, // the bounds: no overflow
	} {
		if got := BurstUS(tc.limit, tc.percent); got != tc.want {
			t.Errorf("BurstUS(%dm, %d%%) = %d, want %d", tc.limit, tc.percent, got, tc.want)
		}
	}
	if got := BaseQuotaUS(1500); got != 150_000 {
		t.Errorf("BaseQuotaUS(1500m) = %d", got)
	}
}

func TestEligible(t *testing.T) {
	for class, want := range map[string]bool{"LS": true, "SYSTEM": true, "LSR": false, "LSE": false, "BE": false} {
		if ok, why := Eligible(class); ok != want || (!ok && !strings.Contains(why, class)) {
			t.Errorf("%s: %v (%s), want %v", class, ok, why, want)
		}
	}
}

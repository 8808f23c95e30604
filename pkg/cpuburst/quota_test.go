package cpuburst

import (
	"strings"
	"testing"
	"time"
)

func TestPoolState(t *testing.T) {
	for _, tc := range []struct {
		use   float64
		known bool
		want  Pool
	}{{10, true, PoolIdle}, {44.9, true, PoolIdle}, {45, true, PoolCooling}, {50, true, PoolOverload}, {90, false, PoolUnknown}} {
		if got := PoolState(tc.use, tc.known, 50); got != tc.want {
			t.Errorf("use %v known %v: %s, want %s", tc.use, tc.known, got, tc.want)
		}
	}
}

// TestStepQuota walks one container through a raise: up a fifth per
// throttled reconcile while the pool is idle, capped at
// cfsQuotaBurstPercent; held while cooling, unknown or not throttled; down
// while overloaded, never below the base; back to the base after
// cfsQuotaBurstPeriodSeconds and resting as long; from a new base on resize.
func TestStepQuota(t *testing.T) {
	s := Settings{Policy: Auto, CFSQuotaBurstPercent: 200, CFSQuotaBurstPeriodSeconds: 10}
	t0 := time.Unix(1000, 0)
	const base = 100_000
	steps := []struct {
		name      string
		base      int64
		throttled bool
		pool      Pool
		at        int // seconds after t0
		want      int64
		why       string
	}{
		{"not throttled stays", base, false, PoolIdle, 0, base, "not throttled"},
		{"throttled, pool unknown: hold", base, true, PoolUnknown, 1, base, "holding"},
		{"up", base, true, PoolIdle, 2, 120_000, "stepping up"},
		{"up again", base, true, PoolIdle, 3, 144_000, "stepping up"},
		{"cooling holds", base, true, PoolCooling, 4, 144_000, "cooling"},
		{"up", base, true, PoolIdle, 5, 172_800, "stepping up"},
		{"capped at 200 %", base, true, PoolIdle, 6, 200_000, "ceiling 200000"},
		{"overloaded steps down", base, false, PoolOverload, 7, 160_000, "stepping down"},
		{"period over: back to base", base, true, PoolIdle, 12, base, "back to the base"},
		{"resting", base, true, PoolIdle, 15, base, "resting"},
		{"rested: up", base, true, PoolIdle, 22, 120_000, "stepping up"},
		{"resize: new base", 300_000, false, PoolIdle, 23, 300_000, "base 300000"},
		{"down to base, not below", 300_000, false, PoolOverload, 24, 300_000, "stepping down"},
	}
	var r Raise
	for i, st := range steps {
		next, why := StepQuota(r, QuotaInput{BaseUS: st.base, Throttled: st.throttled, Pool: st.pool, Now: t0.Add(time.Duration(st.at) * time.Second)}, s)
		if next.QuotaUS != st.want || !strings.Contains(why, st.why) {
			t.Fatalf("step %d (%s): quota %d (%s), want %d (%s)", i, st.name, next.QuotaUS, why, st.want, st.why)
		}
		if next.Raised() == next.Since.IsZero() {
			t.Fatalf("step %d (%s): raised %v but since %v", i, st.name, next.Raised(), next.Since)
		}
		r = next
	}
}

// TestStepQuotaNoPeriod: cfsQuotaBurstPeriodSeconds -1 never ends a raise
// by time; and a ceiling of 100 % never raises.
func TestStepQuotaNoPeriod(t *testing.T) {
	s := Settings{Policy: Auto, CFSQuotaBurstPercent: 300, CFSQuotaBurstPeriodSeconds: -1}
	r := Raise{QuotaUS: 200_000, BaseUS: 100_000, Since: time.Unix(0, 0)}
	if next, _ := StepQuota(r, QuotaInput{BaseUS: 100_000, Pool: PoolIdle, Now: time.Unix(1e6, 0)}, s); next.QuotaUS != 200_000 {
		t.Errorf("without a period the raise ended: %d", next.QuotaUS)
	}
	s.CFSQuotaBurstPercent = 100
	if next, _ := StepQuota(Raise{}, QuotaInput{BaseUS: 100_000, Throttled: true, Pool: PoolIdle, Now: time.Unix(1, 0)}, s); next.Raised() {
		t.Errorf("a 100 %% ceiling raised the quota to %d", next.QuotaUS)
	}
}

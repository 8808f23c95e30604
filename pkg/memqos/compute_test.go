package memqos

import (
	"math"
	"math/bits"
	"testing"
)

const mib = int64(1) << 20

// want is the expected state of one file: Op and, for Write/Expect, Value.
type want struct {
	op Op
	v  int64
}

func checkSettings(t *testing.T, got Settings, wants map[Knob]want) {
	t.Helper()
	for k, w := range wants {
		s, ok := got.Get(k)
		if !ok {
			t.Errorf("%s: missing", k)
			continue
		}
		if s.Op != w.op || (w.op != Restore && s.Value != w.v) {
			t.Errorf("%s = %s %d (%s), want %s %d", k, s.Op, s.Value, s.Why, w.op, w.v)
		}
	}
}

func TestSeedWorkedExamples(t *testing.T) {
	cases := []struct {
		name  string
		class *ClassConfig
		c     Container
		wants map[Knob]want
	}{
		{"min: request 100MiB, minLimitPercent 100", class(on, Params{MinLimitPercent: p(100)}),
			Container{RequestBytes: 100 * mib},
			map[Knob]want{MemoryMin: {Write, 104857600}, MemoryLow: {Restore, 0}}},
		{"low: request 100MiB, lowLimitPercent 100", class(on, Params{LowLimitPercent: p(100)}),
			Container{RequestBytes: 100 * mib},
			map[Knob]want{MemoryLow: {Write, 104857600}, MemoryMin: {Restore, 0}}},
		{"high: limit 100MiB, throttlingPercent 80", class(on, Params{ThrottlingPercent: p(80), WmarkRatio: p(0)}),
			Container{LimitBytes: 100 * mib},
			map[Knob]want{MemoryHigh: {Write, 83886080}, MemoryWmarkHigh: {Restore, 0}, MemoryWmarkRatio: {Restore, 0}}},
		{"wmark: limit 100MiB, throttling 80, wmarkRatio 95", class(on, Params{ThrottlingPercent: p(80), WmarkRatio: p(95)}),
			Container{LimitBytes: 100 * mib},
			map[Knob]want{MemoryHigh: {Write, 83886080}, MemoryWmarkRatio: {Write, 95}, MemoryWmarkHigh: {Expect, 79691776}}},
		{"wmark without throttling uses the limit", class(on, Params{}),
			Container{LimitBytes: 100 * mib},
			map[Knob]want{MemoryHigh: {Restore, 0}, MemoryWmarkHigh: {Expect, 99614720}, MemoryWmarkMinAdj: {Write, -25}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := labelled(ClassLS)
			w.Containers = []Container{tc.c}
			d, err := Compute(Config{LS: tc.class}, NamespaceConfig{}, w, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkSettings(t, d.Containers[0].Settings, tc.wants)
		})
	}
}

func TestContainerSettings(t *testing.T) {
	all := Profile{MinLimitPercent: 50, LowLimitPercent: 100, ThrottlingPercent: 80, WmarkRatio: 90, WmarkMinAdj: 50}
	cases := []struct {
		name  string
		p     Profile
		c     Container
		wants map[Knob]want
	}{
		{"request and limit", all, Container{RequestBytes: 100, LimitBytes: 1000},
			map[Knob]want{MemoryMin: {Write, 50}, MemoryLow: {Write, 100}, MemoryHigh: {Write, 800},
				MemoryWmarkRatio: {Write, 90}, MemoryWmarkHigh: {Expect, 720}, MemoryWmarkMinAdj: {Write, 50}}},
		{"no request: no protection", all, Container{LimitBytes: 1000},
			map[Knob]want{MemoryMin: {Restore, 0}, MemoryLow: {Restore, 0}, MemoryHigh: {Write, 800}}},
		{"no limit: no memory.high, no wmark_high, ratio still written", all, Container{RequestBytes: 100},
			map[Knob]want{MemoryHigh: {Restore, 0}, MemoryWmarkHigh: {Restore, 0}, MemoryWmarkRatio: {Write, 90}, MemoryLow: {Write, 100}}},
		{"neither request nor limit", all, Container{},
			map[Knob]want{MemoryMin: {Restore, 0}, MemoryLow: {Restore, 0}, MemoryHigh: {Restore, 0}, MemoryWmarkHigh: {Restore, 0}}},
		{"high below the request, as the formula says", all, Container{RequestBytes: 900, LimitBytes: 1000},
			map[Knob]want{MemoryHigh: {Write, 800}, MemoryWmarkHigh: {Expect, 720}}},
		{"request equals limit: throttled as the formula says", all, Container{RequestBytes: 1000, LimitBytes: 1000},
			map[Knob]want{MemoryHigh: {Write, 800}, MemoryWmarkHigh: {Expect, 720}, MemoryLow: {Write, 1000}}},
		{"throttling 100 equals the limit", Profile{ThrottlingPercent: 100, WmarkRatio: 50}, Container{LimitBytes: 1000},
			map[Knob]want{MemoryHigh: {Restore, 0}, MemoryWmarkHigh: {Expect, 500}}},
		{"rounding down", Profile{MinLimitPercent: 33, ThrottlingPercent: 99}, Container{RequestBytes: 10, LimitBytes: 1001},
			map[Knob]want{MemoryMin: {Write, 3}, MemoryHigh: {Write, 990}}},
		{"all parameters 0 = off", Profile{}, Container{RequestBytes: 100, LimitBytes: 1000},
			map[Knob]want{MemoryMin: {Restore, 0}, MemoryLow: {Restore, 0}, MemoryHigh: {Restore, 0},
				MemoryWmarkRatio: {Restore, 0}, MemoryWmarkHigh: {Restore, 0}, MemoryWmarkMinAdj: {Restore, 0}}},
		{"largest sizes do not overflow", Profile{MinLimitPercent: 100, ThrottlingPercent: 99, WmarkRatio: 100},
			Container{RequestBytes: math.MaxInt64 - 7, LimitBytes: math.MaxInt64},
			map[Knob]want{MemoryMin: {Write, math.MaxInt64 - 7}, MemoryHigh: {Write, 9131138316486228048},
				MemoryWmarkHigh: {Expect, 9131138316486228048}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := containerSettings(tc.p, tc.c, Options{})
			if len(s) != 6 {
				t.Fatalf("got %d settings, want 6", len(s))
			}
			checkSettings(t, s, tc.wants)
		})
	}
}

func TestPercentOfMatchesWideArithmetic(t *testing.T) {
	for _, v := range []int64{0, 1, 99, 100, 101, 104857600, 1<<40 + 37, math.MaxInt64 / 100, math.MaxInt64} {
		for _, p := range []int64{0, 1, 33, 80, 95, 99, 100} {
			hi, lo := bits.Mul64(uint64(v), uint64(p)) // 128-bit product, then divide
			want, _ := bits.Div64(hi, lo, 100)
			if got := percentOf(v, p); uint64(got) != want {
				t.Errorf("percentOf(%d, %d) = %d, want %d", v, p, got, want)
			}
		}
	}
}

func TestSoftLimitMapping(t *testing.T) {
	p := Profile{LowLimitPercent: 50}
	on := containerSettings(p, Container{RequestBytes: 200}, Options{V1SoftLimitForLow: true})
	checkSettings(t, on, map[Knob]want{MemorySoftLimit: {Write, 100}, MemoryLow: {Write, 100}})
	off := containerSettings(Profile{}, Container{RequestBytes: 200}, Options{V1SoftLimitForLow: true})
	checkSettings(t, off, map[Knob]want{MemorySoftLimit: {Restore, 0}})
	if _, ok := containerSettings(p, Container{RequestBytes: 200}, Options{}).Get(MemorySoftLimit); ok {
		t.Error("soft limit present without the option")
	}
}

func TestPodSettingsSumContainers(t *testing.T) {
	p := Profile{MinLimitPercent: 100, LowLimitPercent: 50, WmarkRatio: 95, WmarkMinAdj: -25}
	cs := []ContainerValues{
		{Name: "a", Settings: containerSettings(p, Container{RequestBytes: 100}, Options{V1SoftLimitForLow: true})},
		{Name: "b", Settings: containerSettings(p, Container{RequestBytes: 300}, Options{V1SoftLimitForLow: true})},
		{Name: "no-request", Settings: containerSettings(p, Container{}, Options{V1SoftLimitForLow: true})},
	}
	s := podSettings(p, cs, Options{V1SoftLimitForLow: true})
	checkSettings(t, s, map[Knob]want{MemoryMin: {Write, 400}, MemoryLow: {Write, 200}, MemorySoftLimit: {Write, 200},
		MemoryWmarkRatio: {Write, 95}, MemoryWmarkMinAdj: {Write, -25}})
	if _, ok := s.Get(MemoryHigh); ok {
		t.Error("pod memory.high must be left to the runtime")
	}
	big := []ContainerValues{
		{Settings: Settings{{Knob: MemoryMin, Op: Write, Value: math.MaxInt64 - 1}}},
		{Settings: Settings{{Knob: MemoryMin, Op: Write, Value: 5}}},
	}
	checkSettings(t, Settings{sum(MemoryMin, big)}, map[Knob]want{MemoryMin: {Write, math.MaxInt64}})
	checkSettings(t, Settings{sum(MemoryLow, big)}, map[Knob]want{MemoryLow: {Restore, 0}})
}

func TestKnobCatalogue(t *testing.T) {
	for _, k := range []Knob{MemoryMin, MemoryLow, MemoryHigh} {
		if i, _ := Info(k); i.V2 != Upstream || i.V1 != Extension {
			t.Errorf("%s: %+v, want upstream on v2, extension on v1", k, i)
		}
	}
	for _, k := range []Knob{MemoryWmarkRatio, MemoryWmarkHigh, MemoryWmarkMinAdj} {
		if i, _ := Info(k); i.V2 != Extension || i.V1 != Extension {
			t.Errorf("%s: %+v, want extension everywhere", k, i)
		}
	}
	if i, _ := Info(MemoryWmarkHigh); !i.ReadOnly {
		t.Error("memory.wmark_high is computed by the kernel")
	}
	if i, _ := Info(MemorySoftLimit); i.V1 != Upstream || i.V2 != Absent {
		t.Errorf("soft limit: %+v", i)
	}
	if _, ok := Info("memory.max"); ok {
		t.Error("unknown knob found")
	}
}

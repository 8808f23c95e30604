package memqos

import (
	"fmt"
	"math"
)

// Op is what the cgroup writer does with one file.
type Op string

// The operations.
const (
	// Write writes Value.
	Write Op = "write"
	// Restore puts back the value the file had when the container was
	// created (recorded by the writer), because the feature or this
	// parameter is off. On a ReadOnly file it means "nothing to expect".
	Restore Op = "restore"
	// Expect is for ReadOnly files: Value is what the kernel should show.
	Expect Op = "expect"
)

// Setting is the desired state of one file, with the arithmetic or the
// reason behind it.
type Setting struct {
	Knob  Knob
	Op    Op
	Value int64
	Why   string
}

// Settings is an ordered list of settings, one per file.
type Settings []Setting

// Get returns the setting for k.
func (s Settings) Get(k Knob) (Setting, bool) {
	for _, x := range s {
		if x.Knob == k {
			return x, true
		}
	}
	return Setting{}, false
}

// percentOf is v × pct / 100 rounded down, exact for every int64 v >= 0 and
// pct in 0..100 without overflowing: v = 100q + r gives q×pct + r×pct/100.
func percentOf(v, pct int64) int64 {
	return v/100*pct + v%100*pct/100
}

func restore(k Knob, why string) Setting { return Setting{Knob: k, Op: Restore, Why: why} }

// containerSettings applies an enabled profile to one container.
func containerSettings(p Profile, c Container, opts Options) Settings {
	low := protect(MemoryLow, "lowLimitPercent", p.LowLimitPercent, c.RequestBytes)
	high := throttle(p.ThrottlingPercent, c, opts.ThrottleNotBelowRequest)
	s := Settings{
		protect(MemoryMin, "minLimitPercent", p.MinLimitPercent, c.RequestBytes),
		low,
		high,
		plain(MemoryWmarkRatio, "wmarkRatio", p.WmarkRatio),
		wmarkHigh(p.WmarkRatio, c.LimitBytes, high),
		plain(MemoryWmarkMinAdj, "wmarkMinAdj", p.WmarkMinAdj),
	}
	if opts.V1SoftLimitForLow {
		s = append(s, softLimit(low))
	}
	return s
}

// protect computes memory.min or memory.low from the request.
func protect(k Knob, name string, pct, request int64) Setting {
	switch {
	case pct == 0:
		return restore(k, name+" is 0 (off)")
	case request == 0:
		return restore(k, "no memory request")
	}
	return Setting{Knob: k, Op: Write, Value: percentOf(request, pct),
		Why: fmt.Sprintf("request %d × %s %d / 100", request, name, pct)}
}

// throttle computes memory.high = limit × throttlingPercent / 100, the
// formula manifests are written against, for every pod including those whose
// request equals the limit. notBelowRequest is Locus's own opt-in: it raises
// the value to the request so a container is never throttled inside the
// memory it asked for, and then leaves a value that reaches the limit alone.
func throttle(pct int64, c Container, notBelowRequest bool) Setting {
	switch {
	case pct == 0:
		return restore(MemoryHigh, "throttlingPercent is 0 (off)")
	case c.LimitBytes == 0:
		return restore(MemoryHigh, "no memory limit, memory.high stays max")
	}
	v := percentOf(c.LimitBytes, pct)
	why := fmt.Sprintf("limit %d × throttlingPercent %d / 100", c.LimitBytes, pct)
	if notBelowRequest && v < c.RequestBytes {
		v = c.RequestBytes
		why += fmt.Sprintf(" = %d, raised to the request", percentOf(c.LimitBytes, pct))
	}
	// memory.high at the limit throttles nothing: the file keeps max, which
	// also survives a later change of the limit.
	if v >= c.LimitBytes {
		return restore(MemoryHigh, why+": not below the limit, nothing to throttle")
	}
	return Setting{Knob: MemoryHigh, Op: Write, Value: v, Why: why}
}

// wmarkHigh is the async reclaim threshold the kernel derives from
// memory.wmark_ratio: a share of memory.high when that is set, else of the limit.
func wmarkHigh(ratio, limit int64, high Setting) Setting {
	base, what := limit, "limit"
	if high.Op == Write {
		base, what = high.Value, "memory.high"
	}
	switch {
	case ratio == 0:
		return restore(MemoryWmarkHigh, "wmarkRatio is 0 (off)")
	case base == 0:
		return restore(MemoryWmarkHigh, "no memory limit, no async reclaim threshold")
	}
	return Setting{Knob: MemoryWmarkHigh, Op: Expect, Value: percentOf(base, ratio),
		Why: fmt.Sprintf("%s %d × wmarkRatio %d / 100", what, base, ratio)}
}

// plain writes a parameter as is (the ratio and min-adj files take it raw).
func plain(k Knob, name string, v int64) Setting {
	if v == 0 {
		return restore(k, name+" is 0 (off)")
	}
	return Setting{Knob: k, Op: Write, Value: v, Why: fmt.Sprintf("%s %d", name, v)}
}

// softLimit approximates memory.low on upstream cgroup v1: usage above the
// soft limit is reclaimed first under global pressure.
func softLimit(low Setting) Setting {
	if low.Op != Write {
		return restore(MemorySoftLimit, "memory.low target not set: "+low.Why)
	}
	return Setting{Knob: MemorySoftLimit, Op: Write, Value: low.Value, Why: "memory.low target, " + low.Why}
}

// podSettings derives the pod cgroup's files. Protection is hierarchical, so
// the pod gets the sum of its containers' memory.min and memory.low (and
// soft limits); the ratio and min-adj are the containers' own. The pod's
// memory.high and limit are left to the runtime.
func podSettings(p Profile, cs []ContainerValues, opts Options) Settings {
	s := Settings{
		sum(MemoryMin, cs),
		sum(MemoryLow, cs),
		plain(MemoryWmarkRatio, "wmarkRatio", p.WmarkRatio),
		plain(MemoryWmarkMinAdj, "wmarkMinAdj", p.WmarkMinAdj),
	}
	if opts.V1SoftLimitForLow {
		s = append(s, sum(MemorySoftLimit, cs))
	}
	return s
}

func sum(k Knob, cs []ContainerValues) Setting {
	var total int64
	n := 0
	for _, c := range cs {
		if x, ok := c.Settings.Get(k); ok && x.Op == Write {
			n++
			if total > math.MaxInt64-x.Value {
				total = math.MaxInt64
			} else {
				total += x.Value
			}
		}
	}
	if n == 0 {
		return restore(k, "no container sets "+string(k))
	}
	return Setting{Knob: k, Op: Write, Value: total, Why: fmt.Sprintf("sum over %d container(s)", n)}
}

// allRestored is the state of a workload whose memory QoS is off.
func allRestored(why string, opts Options, pod bool) Settings {
	knobs := []Knob{MemoryMin, MemoryLow, MemoryHigh, MemoryWmarkRatio, MemoryWmarkHigh, MemoryWmarkMinAdj}
	if pod {
		knobs = []Knob{MemoryMin, MemoryLow, MemoryWmarkRatio, MemoryWmarkMinAdj}
	}
	if opts.V1SoftLimitForLow {
		knobs = append(knobs, MemorySoftLimit)
	}
	s := make(Settings, 0, len(knobs))
	for _, k := range knobs {
		s = append(s, restore(k, why))
	}
	return s
}

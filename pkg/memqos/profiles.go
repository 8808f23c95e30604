package memqos

// The profiles. docs/memory-qos.md explains each number.

// TableDefaults is what a class runs with when its config says enable: true
// and leaves a parameter out: min, low and throttling off, async reclaim at
// 95 % of the limit, and the min watermark moved down for latency-sensitive
// pods (they enter global reclaim later) and up for BE pods (earlier).
func TableDefaults(be bool) Profile {
	if be {
		return Profile{WmarkRatio: 95, WmarkMinAdj: 50}
	}
	return Profile{WmarkRatio: 95, WmarkMinAdj: -25}
}

// Recommended is the profile of policy auto: the documented defaults as they
// stand (min, low and throttling off, wmarkRatio 95, wmarkMinAdj −25 / 50),
// since that is what "recommended parameters" means to a manifest written for
// the protocol; pod parameters override each of them.
func Recommended(be bool) Profile {
	return TableDefaults(be)
}

// With returns p with every parameter that o gives replaced.
func (p Profile) With(o Params) Profile {
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.MinLimitPercent, o.MinLimitPercent)
	set(&p.LowLimitPercent, o.LowLimitPercent)
	set(&p.ThrottlingPercent, o.ThrottlingPercent)
	set(&p.WmarkRatio, o.WmarkRatio)
	set(&p.WmarkMinAdj, o.WmarkMinAdj)
	return p
}

package cpuburst

import (
	"fmt"
	"time"
)

// The raise moves by these factors per reconcile, as Koordinator's does:
// up by a fifth while throttled, down by a fifth while the node is busy.
const (
	stepUpPercent   = 120
	stepDownPercent = 80
	// coolingPercent of the threshold starts the band where a raise holds
	// but does not grow, so the pool is not pushed over the threshold.
	coolingPercent = 90
)

// Pool is how busy the node's shared pool is against the threshold.
type Pool int

const (
	PoolUnknown  Pool = iota // no usage measured yet
	PoolIdle                 // below 90 % of the threshold
	PoolCooling              // between 90 % of the threshold and the threshold
	PoolOverload             // at or above the threshold
)

// PoolState classes a usage (percent of the pool's CPUs busy) against the
// threshold; known is false before there are two samples to compare.
func PoolState(usePercent float64, known bool, thresholdPercent int64) Pool {
	switch t := float64(thresholdPercent); {
	case !known:
		return PoolUnknown
	case usePercent >= t:
		return PoolOverload
	case usePercent >= t*coolingPercent/100:
		return PoolCooling
	}
	return PoolIdle
}

func (p Pool) String() string {
	return [...]string{"unknown", "idle", "cooling", "overloaded"}[p]
}

// Raise is a container's CFS quota raise in force, kept in the decision's
// memory between reconciles.
type Raise struct {
	QuotaUS int64     // the quota written; equal to BaseUS when not raised
	BaseUS  int64     // the base it was raised from
	Since   time.Time // when the quota left the base; zero at the base
	// Rested is when a raise ended by the period limit may start again.
	Rested time.Time
}

// Raised says whether the quota is above its base.
func (r Raise) Raised() bool { return r.QuotaUS > r.BaseUS }

// QuotaInput is what one reconcile knows of a container.
type QuotaInput struct {
	BaseUS    int64 // from the limit
	Throttled bool  // nr_throttled grew since the last reconcile
	Pool      Pool
	Now       time.Time
}

// StepQuota is one reconcile of the raise: up a step while the container
// is throttled and the pool idle, held while the pool is cooling or
// unknown, down a step while it is overloaded, and back to the base when a
// raise has lasted cfsQuotaBurstPeriodSeconds (which then rests as long
// before it may start again), never above cfsQuotaBurstPercent of the base
// nor below the base. A base that changed (a resize) starts again from it.
func StepQuota(prev Raise, in QuotaInput, s Settings) (Raise, string) {
	r := prev
	if r.BaseUS != in.BaseUS || r.QuotaUS < in.BaseUS {
		r = Raise{QuotaUS: in.BaseUS, BaseUS: in.BaseUS, Rested: prev.Rested}
	}
	ceil := max(in.BaseUS, in.BaseUS*s.CFSQuotaBurstPercent/100)
	period := time.Duration(s.CFSQuotaBurstPeriodSeconds) * time.Second
	var why string
	switch {
	case r.Raised() && period > 0 && in.Now.Sub(r.Since) >= period:
		r = Raise{QuotaUS: in.BaseUS, BaseUS: in.BaseUS, Rested: in.Now.Add(period)}
		return r, fmt.Sprintf("raised for %s, cfsQuotaBurstPeriodSeconds %d: back to the base", period, s.CFSQuotaBurstPeriodSeconds)
	case in.Pool == PoolOverload:
		r.QuotaUS = r.QuotaUS * stepDownPercent / 100
		why = "shared pool overloaded: stepping down"
	case in.Throttled && in.Pool == PoolIdle && in.Now.Before(r.Rested):
		why = "throttled, resting after a raise that reached cfsQuotaBurstPeriodSeconds"
	case in.Throttled && in.Pool == PoolIdle:
		r.QuotaUS = r.QuotaUS * stepUpPercent / 100
		why = "throttled and shared pool idle: stepping up"
	case in.Throttled:
		why = "throttled, shared pool " + in.Pool.String() + ": holding"
	default:
		why = "not throttled: holding"
	}
	r.QuotaUS = min(max(r.QuotaUS, in.BaseUS), ceil)
	switch {
	case !r.Raised():
		r.QuotaUS, r.Since = in.BaseUS, time.Time{}
	case r.Since.IsZero():
		r.Since = in.Now
	}
	return r, fmt.Sprintf("%s: quota %dus (base %dus, ceiling %dus)", why, r.QuotaUS, in.BaseUS, ceil)
}

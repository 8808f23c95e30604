package decide

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/workload"
)

// BurstObservation is what one reconcile read for CPU Burst.
type BurstObservation struct {
	Kernel bool // cgroups have cpu.cfs_burst_us (v2 cpu.max.burst)
	Now    time.Time
	// Throttled is nr_throttled and Quota the CFS quota (µs, -1 for none)
	// of each container cgroup QuotaBurstCgroups named, as read now.
	Throttled map[string]uint64
	Quota     map[string]int64
	// CPUTimes are /proc/stat's counters, by CPU, to measure the shared pool.
	CPUTimes map[int]CPUTime
}

// CPUTime is one CPU's counters, in clock ticks.
type CPUTime struct{ Busy, Total uint64 }

// BurstMemory is what CPU Burst remembers between reconciles: the raises
// in force (kept in the checkpoint, so that a restarted agent brings them
// back down) and the counters of the last reconcile.
type BurstMemory struct {
	Raises    map[string]cpuburst.Raise // by container cgroup
	Throttled map[string]uint64
	CPUTimes  map[int]CPUTime
}

// QuotaBurstCgroups are the container cgroups whose counters and quota the
// next decision needs: those of workloads whose policy raises the quota,
// and those holding a raise.
func QuotaBurstCgroups(cfg *workload.Config, ws []workload.Workload, raises map[string]cpuburst.Raise) []string {
	in := Input{CPUBurst: cfg.CPUBurst}
	var out []string
	for _, w := range ws {
		s, no := burstSettings(in, w)
		for _, c := range w.Containers {
			if _, raised := raises[c.Cgroup]; c.CPULimitMilli > 0 && (raised || (no == "" && s.QuotaBurst() && w.CPUBurstInvalid == "")) {
				out = append(out, c.Cgroup)
			}
		}
	}
	return out
}

// quotaBurst raises the CFS quota of throttled containers while the
// shared pool is idle, one step a reconcile, and brings it back (Decide's
// dynamic part: it reads counters that change every reconcile, so it is
// never taken from the cached decision). It returns d with its own copies
// of the lists it extends.
func quotaBurst(in Input, d Desired, obs BurstObservation, mem BurstMemory) (Desired, BurstMemory) {
	next := BurstMemory{Raises: map[string]cpuburst.Raise{}, Throttled: obs.Throttled, CPUTimes: obs.CPUTimes}
	use, known := poolUse(d.Pools.Shared, mem.CPUTimes, obs.CPUTimes)
	ws := inNameOrder(in.Workloads)
	why := map[string]string{}
	var ops []cgroupfile.Op
	var restores []cgroupfile.Target
	for _, w := range ws {
		if w.Terminating {
			continue // its cgroups go with it
		}
		if w.CPUBurstInvalid != "" { // left as they are
			for _, c := range w.Containers {
				if r, ok := mem.Raises[c.Cgroup]; ok {
					next.Raises[c.Cgroup] = r
				}
			}
			continue
		}
		s, no := burstSettings(in, w)
		step := stepper{s: s, on: no == "" && s.QuotaBurst(), pool: cpuburst.PoolState(use, known, s.SharePoolThresholdPercent),
			obs: obs, mem: mem, next: next}
		o, r, line := step.workload(w)
		ops, restores = append(ops, o...), append(restores, r...)
		if line != "" {
			why[w.Name] = line
		}
	}
	if len(ops) > 0 || len(restores) > 0 || len(why) > 0 {
		d.Ops = append(slices.Clip(d.Ops), ops...)
		d.Restores = append(slices.Clip(d.Restores), restores...)
		d.Workloads = slices.Clone(d.Workloads)
		for i := range d.Workloads {
			d.Workloads[i].QuotaBurstWhy = why[d.Workloads[i].Name]
		}
	}
	return d, next
}

// stepper steps the raises of one workload.
type stepper struct {
	s        cpuburst.Settings
	on       bool
	pool     cpuburst.Pool
	obs      BurstObservation
	mem      BurstMemory
	next     BurstMemory
	resized  bool
	from, to int64 // the pod's raise before and after, over its base
}

func (p *stepper) workload(w workload.Workload) ([]cgroupfile.Op, []cgroupfile.Target, string) {
	var ops []cgroupfile.Op
	var lines []string
	var podBase int64
	podIsContainer, allLimited := false, len(w.Containers) > 0
	for _, c := range w.Containers {
		podIsContainer = podIsContainer || c.Cgroup == w.Cgroup
		if c.CPULimitMilli <= 0 {
			allLimited = false
			continue
		}
		base := cpuburst.BaseQuotaUS(c.CPULimitMilli)
		podBase += base
		op, line := p.container(c, base)
		if op != nil {
			ops = append(ops, *op)
		}
		if line != "" {
			lines = append(lines, c.Name+": "+line)
		}
	}
	if len(lines) == 0 && !p.on {
		return nil, nil, ""
	}
	line := strings.Join(append([]string{p.s.Why(), "pool " + p.pool.String()}, lines...), "; ")
	if podIsContainer || !allLimited {
		return ops, nil, line
	}
	// The pod's quota bounds its containers' (v1 refuses a child above
	// its parent): it rises first and comes down last, by the same amount.
	pod := cgroupfile.Op{Cgroup: w.Cgroup, Knob: cgroupfile.CPUQuota, Value: strconv.FormatInt(podBase+p.to, 10)}
	switch {
	case p.to > 0 && p.to >= p.from:
		return append([]cgroupfile.Op{pod}, ops...), nil, line
	case p.to > 0:
		return append(ops, pod), nil, line
	case p.from > 0 && p.resized:
		pod.Settle = true
		return append(ops, pod), nil, line
	case p.from > 0:
		return ops, []cgroupfile.Target{{Cgroup: w.Cgroup, Knob: cgroupfile.CPUQuota}}, line
	}
	return ops, nil, line
}

// container steps one container's raise; no op when its quota is left
// alone.
func (p *stepper) container(c workload.Container, base int64) (*cgroupfile.Op, string) {
	prev, had := p.mem.Raises[c.Cgroup]
	if had {
		p.from += prev.QuotaUS - prev.BaseUS
		p.resized = p.resized || prev.BaseUS != base
	}
	op := cgroupfile.Op{Cgroup: c.Cgroup, Knob: cgroupfile.CPUQuota, Value: strconv.FormatInt(base, 10), Settle: true}
	cur, read := p.obs.Quota[c.Cgroup]
	switch {
	case !p.on && had && prev.Raised():
		return &op, "back to the base, " + strconv.FormatInt(base, 10) + "us"
	case !p.on || !read:
		return nil, ""
	case cur < 0:
		return nil, "the kubelet set no CFS quota: left alone"
	case !had && cur != base:
		return nil, fmt.Sprintf("quota %dus is not the %dus the limit gives (a kubelet cpuCFSQuotaPeriod other than 100ms?): left alone", cur, base)
	}
	last, seen := p.mem.Throttled[c.Cgroup]
	now := p.obs.Throttled[c.Cgroup]
	r, line := cpuburst.StepQuota(prev, cpuburst.QuotaInput{BaseUS: base, Throttled: seen && now > last, Pool: p.pool, Now: p.obs.Now}, p.s)
	if r.Raised() || p.obs.Now.Before(r.Rested) {
		p.next.Raises[c.Cgroup] = r
	}
	p.to += r.QuotaUS - base
	op.Value, op.Settle = strconv.FormatInt(r.QuotaUS, 10), !r.Raised()
	return &op, line
}

// poolUse is the share of the shared pool's CPU time that was busy between
// two samples, in percent; known is false without two samples.
func poolUse(pool cpuset.CPUSet, before, after map[int]CPUTime) (float64, bool) {
	var busy, total uint64
	for _, cpu := range pool.List() {
		a, okA := before[cpu]
		b, okB := after[cpu]
		if !okA || !okB || b.Total < a.Total || b.Busy < a.Busy {
			continue
		}
		busy, total = busy+b.Busy-a.Busy, total+b.Total-a.Total
	}
	if total == 0 {
		return 0, false
	}
	return 100 * float64(busy) / float64(total), true
}

// sameRaises says whether two sets of raises are equal: the checkpoint is
// saved when they are not.
func sameRaises(a, b map[string]cpuburst.Raise) bool {
	return maps.EqualFunc(a, b, func(x, y cpuburst.Raise) bool {
		return x.QuotaUS == y.QuotaUS && x.BaseUS == y.BaseUS && x.Since.Equal(y.Since) && x.Rested.Equal(y.Rested)
	})
}

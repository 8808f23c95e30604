// Package burstwatch reads, once a reconcile, what CPU Burst's decision
// needs of the node: whether the kernel has the burst file, the throttle
// counters and CFS quota of the container cgroups the decision names
// (decide.QuotaBurstCgroups), and the CPUs' time counters from /proc/stat,
// to measure the shared pool. It only reads.
package burstwatch

import (
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/workload"
)

// Watch reads one node.
type Watch struct {
	h        *cgroup.Hierarchy
	procRoot string
	kernel   bool
	now      func() time.Time
}

// New probes the kernel once: cgroups have cpu.cfs_burst_us (v2
// cpu.max.burst) from Linux 5.14 on.
func New(h *cgroup.Hierarchy, procRoot string) *Watch {
	return &Watch{h: h, procRoot: procRoot, kernel: h.KernelHas(cgroup.CPUBurst), now: time.Now}
}

// Kernel says whether the kernel has the burst file.
func (w *Watch) Kernel() bool { return w != nil && w.kernel }

// Observe reads what the decision on these workloads needs. A cgroup that
// cannot be read is left out (its quota is then left alone); /proc/stat
// unread leaves the shared pool unmeasured (raises hold).
func (w *Watch) Observe(cfg *workload.Config, ws []workload.Workload, raises map[string]cpuburst.Raise) decide.BurstObservation {
	if w == nil {
		return decide.BurstObservation{}
	}
	obs := decide.BurstObservation{Kernel: w.kernel, Now: w.now()}
	cgs := decide.QuotaBurstCgroups(cfg, ws, raises)
	if len(cgs) == 0 {
		return obs
	}
	obs.Throttled, obs.Quota = map[string]uint64{}, map[string]int64{}
	for _, cg := range cgs {
		if n, q, err := w.h.Throttling(cg); err == nil {
			obs.Throttled[cg], obs.Quota[cg] = n, q
		}
	}
	if times, err := procfs.New(w.procRoot).CPUTimes(); err == nil {
		obs.CPUTimes = map[int]decide.CPUTime{}
		for cpu, t := range times {
			obs.CPUTimes[cpu] = decide.CPUTime{Busy: t.Busy, Total: t.Total}
		}
	}
	return obs
}

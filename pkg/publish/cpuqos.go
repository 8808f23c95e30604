package publish

import (
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/coresched"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/status"
)

// cpuQoSLines say what the kernel offers CPU QoS, for the node's status.
func cpuQoSLines(cpuIdle, burst bool, core coresched.Support) []string {
	idle := "cpu.idle: present: BE workloads are made SCHED_IDLE groups"
	if !cpuIdle {
		idle = "cpu.idle: absent (the kernel predates Linux 5.15): BE workloads get the lowest cpu.shares (v2 cpu.weight 1) instead"
	}
	b := "cpu burst: present (cpu.cfs_burst_us, v2 cpu.max.burst)"
	if !burst {
		b = "cpu burst: absent (the kernel predates Linux 5.14): CPU Burst's burst buffer is skipped; the CFS quota raise still works"
	}
	return []string{idle, "core scheduling: " + core.Reason, b}
}

// cpuQoSStatus is a workload's CPU QoS as decided and carried out;
// isolated: its processes were given a cookie.
func cpuQoSStatus(s decide.WorkloadState, core coresched.Support, isolated bool) status.CPUQoSStatus {
	st := status.CPUQoSStatus{Reason: s.CPUQoSWhy, CPUBurst: s.CPUBurstWhy, CFSQuotaBurst: s.QuotaBurstWhy}
	switch {
	case !s.CoreIsolation:
	case !core.Available:
		st.CoreIsolation = s.CoreIsolationWhy + "; not applied: core scheduling is " + core.Reason
	case isolated:
		st.CoreIsolation = s.CoreIsolationWhy + "; its processes share a core scheduling cookie of their own"
	default:
		st.CoreIsolation = s.CoreIsolationWhy + "; no process to give a cookie yet"
	}
	return st
}

// readCPUQoS gives the CPU QoS files the cgroup has.
func readCPUQoS(r Reader, rel string) map[string]string {
	out := map[string]string{}
	for _, k := range []cgroup.Knob{cgroup.CPUIdle, cgroup.CPUShares, cgroup.CPUBurst, cgroup.CPUQuota} {
		spec, _ := cgroup.Lookup(k)
		pl := spec.Placement(r.Version())
		if pl == nil {
			continue
		}
		// Named by the file (cpu.weight on v2), since its text is the file's.
		if v, err := r.ReadKnob(rel, k); err == nil {
			out[pl.File] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

package agent

import (
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/execute"
)

// cpuQoSLines say what the kernel offers CPU QoS, for the node's status.
func (a *Agent) cpuQoSLines() []string {
	idle := "cpu.idle: present: BE workloads are made SCHED_IDLE groups"
	if !a.cpuIdle {
		idle = "cpu.idle: absent (the kernel predates Linux 5.15): BE workloads get the lowest cpu.shares (v2 cpu.weight 1) instead"
	}
	return []string{idle, "core scheduling: " + a.exec.CoreSupport().Reason}
}

// cpuQoSStatus is a workload's CPU QoS as decided and carried out.
func (a *Agent) cpuQoSStatus(s decide.WorkloadState) CPUQoSStatus {
	st := CPUQoSStatus{Reason: s.CPUQoSWhy}
	switch {
	case !s.CoreIsolation:
	case !a.exec.CoreSupport().Available:
		st.CoreIsolation = s.CoreIsolationWhy + "; not applied: core scheduling is " + a.exec.CoreSupport().Reason
	case a.exec.Isolated(s.Name):
		st.CoreIsolation = s.CoreIsolationWhy + "; its processes share a core scheduling cookie of their own"
	default:
		st.CoreIsolation = s.CoreIsolationWhy + "; no process to give a cookie yet"
	}
	return st
}

// readCPUQoS gives the CPU QoS files the cgroup has, from seen or read.
func (a *Agent) readCPUQoS(rel string, seen map[cgroup.Knob]execute.FileState) map[string]string {
	out := map[string]string{}
	for _, k := range []cgroup.Knob{cgroup.CPUIdle, cgroup.CPUShares} {
		spec, _ := cgroup.Lookup(k)
		pl := spec.Placement(a.h.Version())
		if pl == nil {
			continue
		}
		// Named by the file (cpu.weight on v2), since its text is the file's.
		if f, ok := seen[k]; ok {
			if f.Present {
				out[pl.File] = f.Text
			}
			continue
		}
		if v, err := a.h.ReadKnob(rel, k); err == nil {
			out[pl.File] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

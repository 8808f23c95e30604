package decide

import (
	"strconv"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/workload"
)

// burstSettings are the CPU Burst settings in force for a workload, and
// why it does not burst at all ("" when it may).
func burstSettings(in Input, w workload.Workload) (cpuburst.Settings, string) {
	s := cpuburst.Resolve(w.CPUBurst, in.CPUBurst)
	switch {
	case decidedElsewhere(w.Name):
		return s, "a `locus run`"
	case w.CPUQoSInvalid != "":
		return s, "its class cannot be read: no burst"
	}
	if ok, why := cpuburst.Eligible(w.CPUQoS.Class); !ok {
		return s, why
	}
	return s, ""
}

// burstOps sets each container's burst buffer (cpu.cfs_burst_us, v2
// cpu.max.burst) from its CPU limit and cpuBurstPercent, and the pod
// cgroup's to their sum, as Koordinator does, so that the pod's own quota
// does not throttle what its containers may burst; every file not asked
// for goes back to its original. Nothing is written where the kernel has
// no burst file, and bad annotation text writes nothing and is a problem.
func burstOps(in Input, w workload.Workload, st *WorkloadState) ([]cgroupfile.Op, []cgroupfile.Target, []workload.Problem) {
	if decidedElsewhere(w.Name) {
		return nil, nil, nil
	}
	if w.CPUBurstInvalid != "" {
		st.CPUBurstWhy = "invalid: " + w.CPUBurstInvalid
		return nil, nil, []workload.Problem{{Workload: w.Name, Reason: "InvalidCPUBurst",
			Message: w.CPUBurstInvalid + "; its CPU Burst files are left as they are"}}
	}
	s, no := burstSettings(in, w)
	on := no == "" && s.BurstBuffer()
	switch {
	case no != "":
		st.CPUBurstWhy = no
	case !on:
		st.CPUBurstWhy = s.Why() + ": no burst buffer"
	case !in.BurstKernel:
		st.CPUBurstWhy = s.Why() + ": skipped, the kernel has no cpu.cfs_burst_us (before Linux 5.14)"
		return nil, nil, nil
	default:
		st.CPUBurstWhy = s.Why()
	}
	var ops []cgroupfile.Op
	var restores []cgroupfile.Target
	var podBurst, podBase int64
	allLimited := true
	podIsContainer := false
	for _, c := range w.Containers {
		podIsContainer = podIsContainer || c.Cgroup == w.Cgroup
		b := cpuburst.BurstUS(c.CPULimitMilli, s.CPUBurstPercent)
		if c.CPULimitMilli > 0 {
			podBase += cpuburst.BaseQuotaUS(c.CPULimitMilli)
		} else {
			allLimited = false
		}
		if on && b > 0 {
			podBurst += b
			ops = append(ops, cgroupfile.Op{Cgroup: c.Cgroup, Knob: cgroupfile.CPUBurst, Value: strconv.FormatInt(b, 10)})
		} else {
			restores = append(restores, cgroupfile.Target{Cgroup: c.Cgroup, Knob: cgroupfile.CPUBurst})
		}
	}
	if on && podBurst == 0 {
		st.CPUBurstWhy += ": no container has a CPU limit, nothing to burst over"
	}
	if podIsContainer {
		return ops, restores, nil
	}
	if allLimited && len(w.Containers) > 0 {
		podBurst = min(podBurst, podBase) // the pod's quota is their sum: the kernel's bound
	}
	if podBurst > 0 {
		ops = append(ops, cgroupfile.Op{Cgroup: w.Cgroup, Knob: cgroupfile.CPUBurst, Value: strconv.FormatInt(podBurst, 10)})
	} else {
		restores = append(restores, cgroupfile.Target{Cgroup: w.Cgroup, Knob: cgroupfile.CPUBurst})
	}
	return ops, restores, nil
}

package decide

import (
	"strconv"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/workload"
)

// cpuKnobs are the files CPU QoS writes, on the workload's own cgroup (the
// pod cgroup of a pod: the group its containers share, which competes with
// the other pods for the CPU).
var cpuKnobs = []cgroupfile.Knob{cgroupfile.CPUIdle, cgroupfile.CPUShares}

// cpuOps decides a workload's CPU QoS and turns it into writes and
// restores: cpu.idle 1 for a demoted workload where the kernel has it, else
// cpu.shares at the lowest weight; every file not asked for goes back to
// its original. Files equal to what the kubelet or runtime set already (a
// BestEffort pod's cpu.shares 2) are not written by the writer. Bad text
// writes nothing and is a problem.
func cpuOps(in Input, w workload.Workload, st *WorkloadState) ([]cgroupfile.Op, []cgroupfile.Target, []workload.Problem) {
	if decidedElsewhere(w.Name) {
		return nil, nil, nil // a lease: its `locus run` sets its own
	}
	if w.CPUQoSInvalid != "" {
		st.CPUQoSWhy = "invalid: " + w.CPUQoSInvalid
		return nil, nil, []workload.Problem{{Workload: w.Name, Reason: "InvalidCPUQOS",
			Message: w.CPUQoSInvalid + "; its CPU QoS files are left as they are"}}
	}
	dec := cpuqos.Compute(in.CPUQoS, w.CPUQoS, in.CPUKernel)
	st.CPUQoSWhy, st.CoreIsolation, st.CoreIsolationWhy = dec.Reason, dec.CoreIsolation, dec.CoreReason
	want := map[cgroupfile.Knob]string{}
	if dec.Idle {
		want[cgroupfile.CPUIdle] = "1"
	}
	if dec.Shares > 0 {
		want[cgroupfile.CPUShares] = strconv.FormatInt(dec.Shares, 10)
	}
	var ops []cgroupfile.Op
	var restores []cgroupfile.Target
	for _, k := range cpuKnobs {
		switch v, ok := want[k]; {
		case ok:
			ops = append(ops, cgroupfile.Op{Cgroup: w.Cgroup, Knob: k, Value: v})
		case k == cgroupfile.CPUShares && dec.Idle:
			// The kernel refuses cpu.shares on an idle group; its original
			// goes back when cpu.idle does (cgroup.Spec.Resets).
		default:
			restores = append(restores, cgroupfile.Target{Cgroup: w.Cgroup, Knob: k})
		}
	}
	return ops, restores, nil
}

// isCPUQoSKnob says whether CPU QoS writes the knob: its files are held
// with the memory QoS files while resource-qos-config is not known.
func isCPUQoSKnob(k cgroupfile.Knob) bool {
	for _, c := range cpuKnobs {
		if c == k {
			return true
		}
	}
	return false
}

package decide

import (
	"strconv"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// The writes and restores of one workload that Compute adds to its lists.

// memOps turns a memory QoS decision into writes and restores, appended to
// ops and restores. A standalone workload is its own single container, so
// pod-level files are skipped there.
func memOps(w workload.Workload, dec memqos.Values, ops []cgroupfile.Op, restores []cgroupfile.Target) ([]cgroupfile.Op, []cgroupfile.Target) {
	add := func(cg string, s memqos.Settings) {
		for _, set := range s {
			switch set.Op {
			case memqos.Write:
				ops = append(ops, cgroupfile.Op{Cgroup: cg, Knob: cgroupfile.Knob(set.Knob), Value: strconv.FormatInt(set.Value, 10)})
			case memqos.Restore:
				if info, _ := memqos.Info(set.Knob); !info.ReadOnly {
					restores = append(restores, cgroupfile.Target{Cgroup: cg, Knob: cgroupfile.Knob(set.Knob)})
				}
			}
		}
	}
	byName := map[string]memqos.Settings{}
	for _, c := range dec.Containers {
		byName[c.Name] = c.Settings
	}
	podIsContainer := false
	for _, c := range w.Containers {
		podIsContainer = podIsContainer || c.Cgroup == w.Cgroup
	}
	if !podIsContainer {
		add(w.Cgroup, dec.Pod)
	}
	for _, c := range w.Containers {
		add(c.Cgroup, byName[c.Name])
	}
	return ops, restores
}

// appendOwn adds a workload's writes, restores and problems to d, but for
// the containers the kubelet pinned.
func (d *Desired) appendOwn(w *workload.Workload, pinned map[string]cpuset.CPUSet, ops []cgroupfile.Op, restores []cgroupfile.Target, probs []workload.Problem) {
	ops, restores = notPinned(*w, pinned, ops, restores)
	d.Ops, d.Restores, d.Problems = append(d.Ops, ops...), append(d.Restores, restores...), append(d.Problems, probs...)
}

// notPinned drops the writes and restores of the containers the kubelet
// pinned: Locus writes no cgroup of theirs.
func notPinned(w workload.Workload, pinned map[string]cpuset.CPUSet, ops []cgroupfile.Op, restores []cgroupfile.Target) ([]cgroupfile.Op, []cgroupfile.Target) {
	if len(pinned) == 0 {
		return ops, restores
	}
	skip := map[string]bool{}
	for _, c := range w.Containers {
		if _, ok := pinned[c.Name]; ok {
			skip[c.Cgroup] = true
		}
	}
	var keptOps []cgroupfile.Op
	for _, op := range ops {
		if !skip[op.Cgroup] {
			keptOps = append(keptOps, op)
		}
	}
	var keptRestores []cgroupfile.Target
	for _, t := range restores {
		if !skip[t.Cgroup] {
			keptRestores = append(keptRestores, t)
		}
	}
	return keptOps, keptRestores
}

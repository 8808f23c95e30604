package workload

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/hostconfig"
)

// DedicatedThreads are the cgroups of a libvirt domain's threads that a
// dedicated CPU policy (HostConfig cpuPolicy: dedicated) pins apart: one
// per vCPU, in vCPU order, and the emulator threads'. pkg/decide gives
// each vCPU a whole core of the workload's CPUs.
type DedicatedThreads struct {
	VCPUs    []string
	Emulator string
}

// checkDedicated refuses a dedicated CPU policy on a workload that asks
// for no exclusive CPUs: there would be no cores to dedicate.
func checkDedicated(i int, w hostconfig.Workload) error {
	if !w.Dedicated() {
		return nil
	}
	if need, _ := standaloneCPUNeed(w); !need.Exclusive {
		return fmt.Errorf("workloads[%d].cpuPolicy: %q needs exclusive CPUs: annotation %s \"true\" and an integer resources.limits.cpu (workload %q)",
			i, w.CPUPolicy, AnnotationCPUSet, w.Name)
	}
	return nil
}

// SetBelow gives the workload the cgroups below its own that someone else
// made (a libvirt domain's threads'): they get its cpuset (Unlisted), or,
// under a dedicated CPU policy, the vCPUs' and the emulator's are pinned
// apart (Dedicated) and stay in Unlisted so that they are the workload's
// to write and to restore.
func (w *Workload) SetBelow(below []string) {
	w.Unlisted, w.Dedicated = below, nil
	if !w.dedicated {
		return
	}
	t := DedicatedThreads{}
	type vcpu struct {
		n  int
		cg string
	}
	var vs []vcpu
	for _, cg := range below {
		base := path.Base(cg)
		// The threads' cgroups are in the scope's libvirt sub-tree, or,
		// where libvirt made the domain's cgroup itself, right below it.
		if dir := path.Dir(cg); dir != w.Cgroup && dir != path.Join(w.Cgroup, LibvirtSubtree) {
			continue
		}
		if base == LibvirtEmulator {
			t.Emulator = cg
			continue
		}
		// The names were read by ParseLibvirtThreads: vcpu0 to vcpu16383.
		if num, ok := strings.CutPrefix(base, "vcpu"); ok {
			if n, err := strconv.Atoi(num); err == nil {
				vs = append(vs, vcpu{n, cg})
			}
		}
	}
	if t.Emulator == "" || len(vs) == 0 {
		return // not a domain's whole tree: pkg/hostsource says why
	}
	slices.SortFunc(vs, func(a, b vcpu) int { return a.n - b.n })
	for _, v := range vs {
		t.VCPUs = append(t.VCPUs, v.cg)
	}
	w.Dedicated = &t
}

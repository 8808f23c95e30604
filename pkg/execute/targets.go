package execute

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/workload"
)

// Targets say whose cgroups a decision's writes go to.
type Targets struct {
	Owner   map[string]string   // cgroup (a workload's or a container's) to its workload
	Cgroups map[string][]string // workload to its cgroup and its containers'
	// Uncreated are the cgroups a real run creates before writing them
	// (command and match workloads): a dry run prints their writes apart.
	Uncreated map[string]bool
	// Containers names the container cgroups of pods, so that an event on
	// a pod says which container each file belongs to; it holds until the
	// next Apply, for the removals in between.
	Containers map[string]string
	// Previous are the assignments in force before the decision (the
	// checkpoint's), which a moved workload whose writes failed, and the
	// workload admitted on its CPUs, go back to.
	Previous map[string]workload.Assignment
}

// TargetsOf are the targets of the workloads' writes: every workload's
// cgroup and its containers' own cgroups (those not listed yet too), owned
// by the workload. Uncreated
// is left to the caller.
func TargetsOf(ws []workload.Workload) Targets {
	// Sized once: grown and rehashed at each reconcile, the maps of 300
	// pods were 1.7 % of the bytes the agent allocated under a churn.
	n := 0
	for i := range ws {
		n += len(ws[i].Containers) + len(ws[i].Unlisted)
	}
	t := Targets{Owner: make(map[string]string, len(ws)+n), Cgroups: make(map[string][]string, len(ws)), Containers: make(map[string]string, n)}
	for i := range ws {
		w := &ws[i] // a workload is a large value
		t.Owner[w.Cgroup] = w.Name
		cgs := []string{w.Cgroup}
		for _, c := range w.Containers {
			if c.Cgroup != w.Cgroup {
				t.Owner[c.Cgroup], t.Containers[c.Cgroup] = w.Name, c.Name
				cgs = append(cgs, c.Cgroup)
			}
		}
		for _, cg := range w.Unlisted {
			t.Owner[cg], t.Containers[cg] = w.Name, unlistedName(cg)
			cgs = append(cgs, cg)
		}
		t.Cgroups[w.Name] = cgs
	}
	return t
}

// unlistedName names, in events, a container the pod's status does not
// list yet (the sandbox's, or one just made): "new " and the first 12
// characters of its ID, as runtimes shorten IDs, read from the cgroup
// directory's name (cgroupfs "<id>", systemd "cri-containerd-<id>.scope").
func unlistedName(cg string) string {
	id := strings.TrimSuffix(path.Base(cg), ".scope")
	id = id[strings.LastIndexByte(id, '-')+1:]
	return "new " + id[:min(len(id), 12)]
}

// ownBalanced makes each cgroup the decision writes that is no workload's
// (the NUMA balancer's) its own owner, so that what is told of it names it.
func ownBalanced(owner map[string]string, d decide.Desired) map[string]string {
	if len(d.Balanced)+len(d.Released) == 0 {
		return owner
	}
	if owner == nil {
		owner = map[string]string{}
	}
	for _, cg := range append(slices.Collect(maps.Keys(d.Balanced)), d.Released...) {
		if _, ok := owner[cg]; !ok {
			owner[cg] = cg
		}
	}
	return owner
}

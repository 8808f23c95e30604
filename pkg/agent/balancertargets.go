package agent

import (
	"slices"

	"github.com/locus-project/locus/pkg/locality"
)

// balancerTargets runs once per reconcile, after the cgroup writes: it
// starts the balancer's next measuring window, and returns the memory
// locality runs the balancer needs: groups placed but not yet settled. A
// group whose processes all live in child cgroups (a libvirt VM's scope)
// has nothing the worker can list; it is settled at once and its memory
// follows cpuset.mems (cgroup v2).
func (a *Agent) balancerTargets() []localityTarget {
	r := a.bal
	if r == nil || r.off {
		return nil
	}
	r.afterWrite()
	nodes := memoryNodes(a.topo)
	var out []localityTarget
	for _, g := range r.groups {
		p, ok := r.placed[g.name]
		if !ok || len(p.Partitions) == 0 || r.written[g.name] == "" || r.rec.Settled[g.name] != "" {
			continue
		}
		if r.retry[g.name] {
			delete(r.retry, g.name) // left out once: the worker forgets its last run
			continue
		}
		if g.state < 0 {
			if pids, _ := a.h.Procs(g.cgroup); len(pids) == 0 {
				r.rec.Settled[g.name] = joinParts(p.Partitions)
				continue
			}
		}
		t := localityTarget{Name: g.name, Containers: g.containers, CPUs: r.written[g.name], Local: p.Nodes, Nodes: nodes,
			Settings: locality.Settings{Policy: locality.PolicyBestEffort}}
		if !slices.ContainsFunc(nodes, func(n int) bool { return !slices.Contains(p.Nodes, n) }) {
			t.Skip = locality.ReasonNoTargetNUMA
		}
		out = append(out, t)
	}
	return out
}

package agent

import (
	"slices"

	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/localityloop"
)

// balancerTargets runs once per reconcile, after the cgroup writes: it
// starts the balancer's next measuring window, and returns the memory
// locality runs the balancer needs: groups placed but not yet settled
// (balancerloop.Runner.AfterWrite).
func (a *Agent) balancerTargets() []localityloop.Target {
	r := a.bal
	if r == nil {
		return nil
	}
	groups := r.AfterWrite()
	nodes := localityloop.MemoryNodes(a.topo)
	var out []localityloop.Target
	for _, g := range groups {
		t := localityloop.Target{Name: g.Name, Containers: g.Containers, CPUs: g.CPUs, Local: g.Nodes, Nodes: nodes,
			Settings: locality.Settings{Policy: locality.PolicyBestEffort}}
		if !slices.ContainsFunc(nodes, func(n int) bool { return !slices.Contains(g.Nodes, n) }) {
			t.Skip = locality.ReasonNoTargetNUMA
		}
		out = append(out, t)
	}
	return out
}

package balancerloop

import (
	"maps"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// group is one cgroup balanced in this reconcile.
type group struct {
	name       string
	cgroup     string               // measured here
	containers []workload.Container // written here
	allowed    cpuset.CPUSet
	state      int // index in Desired.Workloads; -1 for a cgroup that is no workload
}

// restarted takes the placements recorded: they stay in force until the
// first window is measured, so a restart moves nothing. The partitions are
// the machine's, by name; the decision keeps each group to its pool.
func (r *Runner) restarted(t *topology.Topology) {
	var gs []balancer.Group
	for _, name := range slices.Sorted(maps.Keys(r.rec.State.Groups)) {
		gs = append(gs, balancer.Group{Name: name})
	}
	for _, p := range balancer.Placements(r.rec.State, balancer.Partitions(t, r.opts.Partition, t.CPUSet()), gs) {
		r.placed[p.Group] = p
	}
}

// workloadGroups are the workloads the decision left in the shared or BE
// pool, but those terminating (written no more).
func (r *Runner) workloadGroups(d decide.Desired) []group {
	byName := make(map[string]*Workload, len(r.ws))
	for i := range r.ws {
		byName[r.ws[i].Name] = &r.ws[i]
	}
	var out []group
	for i, st := range d.Workloads {
		w := byName[st.Name]
		if w == nil || w.Terminating || (st.Pool != "shared" && st.Pool != "be") {
			continue
		}
		allowed := d.Pools.Shared
		if st.Pool == "be" {
			allowed = d.Pools.BE
		}
		out = append(out, group{name: st.Name, cgroup: st.Cgroup, containers: w.Containers, allowed: allowed, state: i})
	}
	return out
}

// stillHere are the workloads of the last decision's groups that this
// reconcile still has, and not terminating.
func (r *Runner) stillHere() []group {
	here := make(map[string]bool, len(r.ws))
	for _, w := range r.ws {
		here[w.Name] = !w.Terminating
	}
	out := make([]group, 0, len(r.wgroups))
	for _, g := range r.wgroups {
		if here[g.name] {
			out = append(out, g)
		}
	}
	return out
}

// listExtra lists the children of the configured parents that are no
// workload's cgroup.
func (r *Runner) listExtra(ws []Workload) []string {
	taken := make(map[string]bool, len(ws))
	for _, w := range ws {
		taken[w.Cgroup] = true
	}
	var out []string
	for _, parent := range r.opts.Cgroups {
		children, err := r.d.H.Children(cgroup.CPUSet, parent)
		if err != nil {
			r.warnOnce("children:"+parent, "numa balancer: cannot list the cgroups under "+parent, err)
			continue
		}
		for _, c := range children {
			if !taken[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

// extraGroups are the cgroups listed this reconcile that are no workload's,
// allowed the last decision's shared pool.
func (r *Runner) extraGroups() []group {
	out := make([]group, 0, len(r.extra))
	for _, c := range r.extra {
		out = append(out, group{name: c, cgroup: c, containers: []workload.Container{{Name: c, Cgroup: c}}, allowed: r.shared, state: -1})
	}
	return out
}

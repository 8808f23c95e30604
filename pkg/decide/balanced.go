package decide

import (
	"maps"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Balanced is where the NUMA balancer (pkg/balancerloop) places the groups
// of the shared and BE pools: workloads, by name, and the cgroups that are
// no workload's (--numa-balancer-cgroups), by cgroup; and the cgroups of
// the second kind it no longer balances, whose cpusets go back to their
// originals. Those cgroups are the balancer's to name: they count as
// prepared.
type Balanced struct {
	Workloads map[string]Placement
	Cgroups   map[string]Placement
	Released  []string
}

// Placement is where the balancer puts a group.
type Placement struct {
	// CPUs are its partitions' (every CPU while they overflow): the group
	// gets those of its pool; with none of them in its pool, its pool.
	CPUs cpuset.CPUSet
	// Nodes are its partitions' NUMA nodes, added to its pool's cpuset.mems
	// until its memory is Home, then its cpuset.mems alone.
	Nodes []int
	Home  bool
}

// empty says whether b places and releases nothing.
func (b Balanced) empty() bool {
	return len(b.Workloads) == 0 && len(b.Cgroups) == 0 && len(b.Released) == 0
}

// balance gives the balanced groups their placements' cpusets. It is
// Decide's dynamic part, as quotaBurst is: placements change between two
// decisions on the same input, so they are never taken from the cached
// decision. A workload keeps the decision's values unless it is in the
// shared or BE pool, is not terminating, and its placement has CPUs in
// its pool: then every container of it gets them. A cgroup that is no
// workload's gets its placement's CPUs in the shared pool, or the whole
// pool, and nothing while the pool is empty. It returns d with its own
// copies of what it changes.
func balance(t *topology.Topology, ws []workload.Workload, d Desired, b Balanced) Desired {
	if b.empty() {
		return d
	}
	d.Balanced = map[string]PodCPUSet{}
	if len(b.Workloads) > 0 {
		d = balanceWorkloads(ws, d, b.Workloads)
	}
	var ops []cgroupfile.Op
	shared := d.Pools.Shared
	sharedMems := Mems(t, shared, false)
	for _, cg := range slices.Sorted(maps.Keys(b.Cgroups)) {
		if shared.IsEmpty() {
			break
		}
		set := PodCPUSet{CPUs: shared.String(), Mems: sharedMems, Pool: "shared"}
		if p := b.Cgroups[cg]; !p.CPUs.Intersection(shared).IsEmpty() {
			set = PodCPUSet{CPUs: p.CPUs.Intersection(shared).String(), Mems: placedMems(sharedMems, p)}
		}
		d.Balanced[cg] = set
		// mems first, so the CPUs find their memory allowed already.
		ops = append(ops, cgroupfile.Op{Cgroup: cg, Knob: cgroupfile.CPUSetMems, Value: set.Mems},
			cgroupfile.Op{Cgroup: cg, Knob: cgroupfile.CPUSetCPUs, Value: set.CPUs})
	}
	var restores []cgroupfile.Target
	for _, cg := range b.Released {
		restores = append(restores, cgroupfile.Target{Cgroup: cg, Knob: cgroupfile.CPUSetCPUs},
			cgroupfile.Target{Cgroup: cg, Knob: cgroupfile.CPUSetMems})
	}
	d.Ops = append(slices.Clip(d.Ops), ops...)
	d.Restores = append(slices.Clip(d.Restores), restores...)
	d.Released = b.Released
	return d
}

// balanceWorkloads rewrites the cpuset values of the balanced workloads'
// containers, and their state.
func balanceWorkloads(ws []workload.Workload, d Desired, placed map[string]Placement) Desired {
	byName := make(map[string]*workload.Workload, len(placed))
	for i := range ws {
		if _, ok := placed[ws[i].Name]; ok {
			byName[ws[i].Name] = &ws[i]
		}
	}
	want := map[string]PodCPUSet{} // by container cgroup
	d.Workloads = slices.Clone(d.Workloads)
	for i := range d.Workloads {
		st := &d.Workloads[i]
		p, ok := placed[st.Name]
		w := byName[st.Name]
		pool := cpuset.New()
		switch st.Pool {
		case "shared":
			pool = d.Pools.Shared
		case "be":
			pool = d.Pools.BE
		}
		if !ok || w == nil || w.Terminating || p.CPUs.Intersection(pool).IsEmpty() {
			continue
		}
		set := PodCPUSet{CPUs: p.CPUs.Intersection(pool).String(), Mems: placedMems(st.Mems, p)}
		for _, c := range w.Containers {
			want[c.Cgroup] = set
		}
		d.Balanced[w.Cgroup] = set
		st.CPUs, st.Mems, st.NUMANodes = set.CPUs, set.Mems, slices.Clone(p.Nodes)
	}
	if len(want) == 0 {
		return d
	}
	d.Ops = slices.Clone(d.Ops)
	for i, op := range d.Ops {
		if set, ok := want[op.Cgroup]; ok {
			switch op.Knob {
			case cgroupfile.CPUSetCPUs:
				d.Ops[i].Value = set.CPUs
			case cgroupfile.CPUSetMems:
				d.Ops[i].Value = set.Mems
			}
		}
	}
	return d
}

// placedMems is the cpuset.mems of a group placed on p whose pool's is
// mems: the partitions' nodes alone once its memory is home, else added.
func placedMems(mems string, p Placement) string {
	nodes := cpuset.New(p.Nodes...)
	if p.Home {
		return nodes.String()
	}
	ids, err := topology.ParseNodeList(mems)
	if err != nil {
		ids = nil
	}
	return cpuset.New(ids...).Union(nodes).String()
}

package decide

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// A moved workload's cpuset.mems is widened at the move to the nodes it
// left and those it goes to: a widening migrates nothing, so the write
// returns at once and the workload waiting for the CPUs is admitted, while
// the memory locality worker moves the pages within its stall budget.
// Where narrowing makes the kernel migrate whatever is left outside, inside
// the write and unbounded (cgroup v2), it is never narrowed while the
// workload runs (keptWide); elsewhere (cgroup v1, whose memory_migrate the
// agent leaves off) it narrows once little is left or the bound passes.
const (
	// MemsLeftToNarrow is the resident memory outside the new nodes at or
	// below which cpuset.mems narrows: an absolute figure rather than a
	// share, since what it bounds is what the kernel migrates inside one
	// write, which a share of a large workload would not keep small.
	MemsLeftToNarrow = 4 << 20
	// MemsFollowBound is the longest cpuset.mems stays wide: memory the
	// worker cannot move (pages shared with others, a worker turned off)
	// does not keep it wide for ever.
	MemsFollowBound = 5 * time.Minute
	// ReasonMemsNarrowed is the Event of a moved workload's cpuset.mems
	// narrowed to its new nodes.
	ReasonMemsNarrowed = "MemsNarrowed"
	// ReasonMemsKeptWide is the Event of a moved workload whose
	// cpuset.mems stays widened while it runs, since narrowing it would
	// migrate inside the write (Observation.NarrowingMigrates).
	ReasonMemsKeptWide = "MemsKeptWide"
)

// followMems carries the moved workloads' wide cpuset.mems from following
// (the checkpoint's) and the moves of this decision (prev: the assignments
// before it) into d's writes and status, and narrows those whose memory
// followed or whose bound passed, with an Event each, unless narrowing
// migrates (obs.NarrowingMigrates): those stay wide, told once at the move.
// It returns what follows still. d is not changed: a decision reused
// shares its slices.
func followMems(obs Observation, unrestricted bool, prev map[string]workload.Assignment, d Desired,
	following map[string]workload.MemsFollowing) (Desired, map[string]workload.MemsFollowing, []eventlog.Event) {
	if unrestricted {
		return d, nil, nil // cpuset.mems is every node, before a move and after
	}
	next := map[string]workload.MemsFollowing{}
	for name, f := range following {
		if _, ok := d.Assignments[name]; ok { // a workload gone has nothing to narrow
			next[name] = f
		}
	}
	movedNow := map[string]bool{}
	for _, m := range d.Moves {
		a, ok := d.Assignments[m.Workload]
		p, had := prev[m.Workload]
		if !ok || !had {
			continue
		}
		wide := cpuset.New(memNodesOf(obs.Topology, p)...).Union(cpuset.New(next[m.Workload].Wide...)).
			Union(cpuset.New(memNodesOf(obs.Topology, a)...))
		next[m.Workload] = workload.MemsFollowing{Wide: wide.List(), Since: obs.Now}
		movedNow[m.Workload] = true
	}
	var events []eventlog.Event
	known := cpuset.New()
	for _, n := range obs.Topology.Nodes {
		known = known.Union(cpuset.New(n.ID))
	}
	widen := map[string]cpuset.CPUSet{}
	for _, name := range slices.Sorted(maps.Keys(next)) {
		f := next[name]
		target := cpuset.New(memNodesOf(obs.Topology, d.Assignments[name])...)
		wide := cpuset.New(f.Wide...).Intersection(known).Union(target)
		if wide.Equals(target) {
			delete(next, name) // nothing outside the new nodes is allowed
			continue
		}
		if movedNow[name] {
			widen[name] = wide
			if obs.NarrowingMigrates {
				events = append(events, keptWide(name, wide, target))
			}
			continue // what was read of its memory predates the move
		}
		if obs.NarrowingMigrates {
			widen[name] = wide // never narrowed while it runs: keptWide
			continue
		}
		left, read := residentOutside(obs.Resident[name], target)
		switch {
		case read && left <= MemsLeftToNarrow:
			events = append(events, event(eventlog.Normal, ReasonMemsNarrowed, name,
				"cpuset.mems narrowed from NUMA nodes %v to %v: its memory followed (%d bytes were left outside)", wide.List(), target.List(), left))
		case !obs.Now.Before(f.Since.Add(MemsFollowBound)) || obs.Now.Before(f.Since):
			events = append(events, event(eventlog.Normal, ReasonMemsNarrowed, name,
				"cpuset.mems narrowed from NUMA nodes %v to %v %s after the move: %s left outside, which the kernel migrates as it narrows",
				wide.List(), target.List(), MemsFollowBound, leftText(left, read)))
		default:
			widen[name] = wide
			continue
		}
		delete(next, name)
	}
	if len(next) == 0 {
		next = nil
	}
	return widened(obs.Workloads, d, widen), next, events
}

// keptWide is the Event of a move whose cpuset.mems stays wide. Where the
// kernel migrates inside a narrowing write (cgroup v2), the write queues a
// migration of every page of the workload's processes on the nodes left,
// file pages shared with other processes included (MPOL_MF_MOVE_ALL; the
// workload's memory.numa_stat does not count those charged to others), and
// waits for it; the migration holds the workload's mmap lock, so its
// threads wait as well, and in the test guest a workload busy on a CPU
// kept the write from returning for minutes. Its CPUs are on the new
// nodes, so the kernel allocates its new pages there first, and the memory
// locality worker moves the rest within its stall budget.
func keptWide(name string, wide, target cpuset.CPUSet) eventlog.Event {
	return event(eventlog.Normal, ReasonMemsKeptWide, name,
		"cpuset.mems stays NUMA nodes %v while the workload runs, though its CPUs are on %v: narrowing it migrates what is left on the nodes it left inside the write and under the workload's mmap lock, without bound; "+
			"new pages are allocated on %v first and the memory locality worker moves the rest within its stall budget",
		wide.List(), target.List(), target.List())
}

// memNodesOf is the nodes an assignment's cpuset.mems names.
func memNodesOf(t *topology.Topology, a workload.Assignment) []int {
	if len(a.MemNodes) > 0 {
		return a.MemNodes
	}
	return t.NodesOf(a.CPUs)
}

// residentOutside is how much of resident is outside target; read is false
// when nothing was read of it.
func residentOutside(resident map[int]uint64, target cpuset.CPUSet) (left uint64, read bool) {
	for node, bytes := range resident {
		if !target.Contains(node) {
			left += bytes
		}
	}
	return left, resident != nil
}

func leftText(left uint64, read bool) string {
	if !read {
		return "how much is left unknown"
	}
	return fmt.Sprintf("%d bytes", left)
}

// widened is d with the cpuset.mems of each workload of widen (its own
// cgroups' writes, not a pool's) allowing those nodes too.
func widened(ws []workload.Workload, d Desired, widen map[string]cpuset.CPUSet) Desired {
	if len(widen) == 0 {
		return d
	}
	cgroups := map[string]cpuset.CPUSet{}
	for _, w := range ws {
		if wide, ok := widen[w.Name]; ok {
			cgroups[w.Cgroup] = wide
			for _, c := range w.Containers {
				cgroups[c.Cgroup] = wide
			}
		}
	}
	with := func(mems string, wide cpuset.CPUSet) string {
		nodes, err := topology.ParseNodeList(mems)
		if err != nil {
			return mems
		}
		return cpuset.New(nodes...).Union(wide).String()
	}
	d.Ops = slices.Clone(d.Ops)
	for i, op := range d.Ops {
		if wide, ok := cgroups[op.Cgroup]; ok && op.Knob == cgroupfile.CPUSetMems && op.Pool == "" {
			d.Ops[i].Value = with(op.Value, wide)
		}
	}
	d.Workloads = slices.Clone(d.Workloads)
	for i, st := range d.Workloads {
		if wide, ok := widen[st.Name]; ok && st.Pool != "kubelet" {
			d.Workloads[i].Mems = with(st.Mems, wide)
		}
	}
	if len(d.Unlisted) > 0 {
		d.Unlisted = maps.Clone(d.Unlisted)
		for cg, p := range d.Unlisted {
			if wide, ok := cgroups[cg]; ok && p.Pool == "" {
				p.Mems = with(p.Mems, wide)
				d.Unlisted[cg] = p
			}
		}
	}
	return d
}

// sameFollowing says a and b follow the same workloads from the same moves.
func sameFollowing(a, b map[string]workload.MemsFollowing) bool {
	return maps.EqualFunc(a, b, func(x, y workload.MemsFollowing) bool {
		return x.Since.Equal(y.Since) && slices.Equal(x.Wide, y.Wide)
	})
}

// Followed are, sorted, the workloads whose memory the memory locality
// worker moves after a move: those moved recently and those still
// widened, which an agent restarted since the move knows only from the
// checkpoint.
func (m Memory) Followed() []string {
	names := slices.Collect(maps.Keys(m.Moved))
	for name := range m.Following {
		if _, ok := m.Moved[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

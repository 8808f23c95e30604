package balancer

import (
	"sort"

	"k8s.io/utils/cpuset"
)

// minRoom is the idle CPU time, in CPUs, the other partitions must offer
// for a saturated partition to overflow into them.
const minRoom = 0.5

// overflow decides which partitions overflow, with hysteresis: a partition
// starts when its predicted load reaches OverflowOn of its CPUs and stops
// once it falls below OverflowOff, and only while the others have room.
// Predicted load counts a group's whole load where it is placed, wherever
// it ran, so a partition whose groups spill over keeps overflowing as long
// as they need more than it has.
func (w *world) overflow(prev State, out map[string]bool) {
	if !w.cfg.Overflow {
		return
	}
	for i, p := range w.parts {
		var room float64
		for j := range w.parts {
			if j != i {
				room += max(0, w.parts[j].Capacity()-w.load[j])
			}
		}
		u := w.util(i)
		on := u >= w.cfg.OverflowOn || (prev.Overflow[p.Name] && u >= w.cfg.OverflowOff)
		if on && room >= minRoom {
			out[p.Name] = true
		}
	}
}

// decision assembles the outcome: each group's CPUs and nodes, and the
// partitions' predicted loads.
func (w *world) decision(groups []Group, sets [][]int, st State, moves []Move) Plan {
	d := Plan{State: st, Moves: moves}
	members := make([][]string, len(w.parts))
	for gi := range groups {
		g := &groups[gi]
		gs := st.Groups[g.Name]
		pl := Placement{Group: g.Name, Load: gs.Load, Partitions: gs.Partitions, LocalPercent: 100}
		if set := sets[gi]; set != nil {
			cpus := cpuset.New()
			for _, i := range set {
				cpus = cpus.Union(w.parts[i].CPUs)
				pl.Overflow = pl.Overflow || st.Overflow[w.parts[i].Name]
				members[i] = append(members[i], g.Name)
			}
			if pl.Overflow {
				cpus = w.all
			}
			if !g.Allowed.IsEmpty() {
				cpus = cpus.Intersection(g.Allowed)
			}
			pl.CPUs, pl.Nodes = cpus, w.nodesOf(set)
			if total := g.MemTotal(); total > 0 {
				pl.LocalPercent = int(100 * (float64(total) - w.remote(g, set)) / float64(total))
			}
		}
		d.Placements = append(d.Placements, pl)
	}
	for i, p := range w.parts {
		sort.Strings(members[i])
		d.Partitions = append(d.Partitions, PartitionLoad{Name: p.Name, Capacity: p.Capacity(), Predicted: w.load[i],
			Groups: members[i], Overflow: st.Overflow[p.Name]})
	}
	return d
}

// Placements gives the placements a state holds, without measuring or
// deciding: what to put back in force after a restart, before the first
// window is measured. Groups on partitions that are gone are not placed.
func Placements(st State, parts []Partition, groups []Group) []Placement {
	w := newWorld(DefaultConfig(), Input{Partitions: parts})
	groups = append([]Group(nil), groups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].Name < groups[j].Name })
	sets := make([][]int, len(groups))
	next := State{Groups: map[string]GroupState{}, Overflow: st.Overflow}
	for i, g := range groups {
		gs := st.Groups[g.Name]
		if sets[i] = w.resolve(gs.Partitions); sets[i] == nil {
			gs.Partitions = nil
		}
		next.Groups[g.Name] = gs
	}
	return w.decision(groups, sets, next, nil).Placements
}

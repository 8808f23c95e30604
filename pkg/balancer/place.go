package balancer

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Place settles the groups of one interval. Groups without a placement,
// once measured in MinWindows windows, are placed, heaviest first, where they add least to the imbalance; then up to
// MaxMoves placed groups that have stayed MinDwell move, each only when the
// move lowers the imbalance score by more than MinGain after counting the
// memory it leaves remote. Equal inputs give equal decisions.
func Place(cfg Config, prev State, in Input) Plan {
	w := newWorld(cfg, in)
	groups := append([]Group(nil), in.Groups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].Name < groups[j].Name })
	next := State{Groups: map[string]GroupState{}, Background: map[string]float64{}, Overflow: map[string]bool{}}
	sets := make([][]int, len(groups))
	for gi := range groups {
		g := &groups[gi]
		gs, seen := prev.Groups[g.Name]
		load := g.CPU
		if seen {
			load = cfg.Smoothing*g.CPU + (1-cfg.Smoothing)*gs.Load
		}
		if g.Threads > 0 {
			load = min(load, float64(g.Threads))
		}
		gs.Load = load
		gs.Windows = min(gs.Windows+1, max(cfg.MinWindows, 1))
		if sets[gi] = w.resolve(gs.Partitions); sets[gi] == nil {
			gs.Partitions = nil
		}
		next.Groups[g.Name] = gs
	}
	w.background(cfg, prev, in, groups, next.Background)
	for gi := range groups {
		if sets[gi] != nil {
			g := &groups[gi]
			w.add(g, sets[gi], next.Groups[g.Name].Load, +1)
		}
	}
	var moves []Move
	for _, gi := range byLoad(groups, next) {
		if sets[gi] == nil && next.Groups[groups[gi].Name].Windows >= cfg.MinWindows {
			if m, ok := w.place(&groups[gi], &sets[gi], next, in); ok {
				moves = append(moves, m)
			}
		}
	}
	moved := map[string]bool{}
	for _, m := range moves {
		moved[m.Group] = true
	}
	for range max(cfg.MaxMoves, 0) {
		m, ok := w.rebalance(groups, sets, next, in, moved)
		if !ok {
			break
		}
		moves, moved[m.Group] = append(moves, m), true
	}
	w.overflow(prev, next.Overflow)
	return w.decision(groups, sets, next, moves)
}

// resolve turns partition names into indices; nil when any is gone.
func (w *world) resolve(names []string) []int {
	if len(names) == 0 {
		return nil
	}
	set := make([]int, 0, len(names))
	for _, n := range names {
		i, ok := w.index[n]
		if !ok {
			return nil
		}
		set = append(set, i)
	}
	sort.Ints(set)
	return set
}

// background estimates, per partition, the load of everything not
// balanced: what ran on its CPUs minus the groups' share of it (a group's
// CPU time is spread over the CPUs it ran on), smoothed like group loads.
func (w *world) background(cfg Config, prev State, in Input, groups []Group, out map[string]float64) {
	for i, p := range w.parts {
		b := p.Busy
		for gi := range groups {
			g := &groups[gi]
			cur := g.Current.Intersection(w.all)
			if cur.IsEmpty() {
				cur = w.all
			}
			if on := p.CPUs.Intersection(cur).Size(); on > 0 {
				b -= g.CPU * float64(on) / float64(cur.Size())
			}
		}
		b = max(b, 0)
		if old, ok := prev.Background[p.Name]; ok {
			b = cfg.Smoothing*b + (1-cfg.Smoothing)*old
		}
		out[p.Name] = b
		w.load[i] += b
	}
}

// byLoad orders groups heaviest first, then by name.
func byLoad(groups []Group, st State) []int {
	idx := make([]int, len(groups))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return st.Groups[groups[idx[a]].Name].Load > st.Groups[groups[idx[b]].Name].Load
	})
	return idx
}

// best is the cheapest candidate set for a group, among those of the size
// it needs (growing the size while memory fits nowhere); ties as tie says,
// then the first.
func (w *world) best(g *Group, from []int, load float64, count []int) ([]int, float64, bool) {
	elig := w.eligible(g)
	if len(elig) == 0 {
		return nil, 0, false
	}
	for k := w.span(g, elig, load); k <= len(elig); k++ {
		var best []int
		var bestCost float64
		var bestTie tie
		for _, set := range w.candidates(elig, k) {
			if keyOf(set) == keyOf(from) || !w.memFits(g, set) {
				continue
			}
			c := w.cost(g, from, set, load)
			t := tie{}
			for _, i := range set {
				t.cpus += w.capOf(g, i)
				t.util, t.groups = max(t.util, w.util(i)), t.groups+count[i]
			}
			if best == nil || c < bestCost-1e-9 || (math.Abs(c-bestCost) <= 1e-9 && t.less(bestTie)) {
				best, bestCost, bestTie = set, c, t
			}
		}
		if best != nil {
			return best, bestCost, true
		}
	}
	return nil, 0, false
}

// tie orders candidates of equal cost: more CPUs the group may use, then
// the least used partitions, then the fewest groups.
type tie struct {
	cpus, util float64
	groups     int
}

func (a tie) less(b tie) bool {
	if a.cpus != b.cpus {
		return a.cpus > b.cpus
	}
	if a.util != b.util {
		return a.util < b.util
	}
	return a.groups < b.groups
}

// place gives an unplaced group its first partition(s).
func (w *world) place(g *Group, set *[]int, st State, in Input) (Move, bool) {
	gs := st.Groups[g.Name]
	to, _, ok := w.best(g, nil, gs.Load, w.counts(st))
	if !ok {
		return Move{}, false
	}
	*set = to
	w.add(g, to, gs.Load, +1)
	w.take(g, to, +1)
	gs.Partitions, gs.Since = w.names(to), in.Now
	st.Groups[g.Name] = gs
	reason := fmt.Sprintf("placed on %s: %s; %s", strings.Join(gs.Partitions, ","), w.describe(to), w.memNote(g, to))
	if len(to) > 1 {
		reason = fmt.Sprintf("spans %s: it uses %.1f CPUs, more than one partition has; %s; %s",
			strings.Join(gs.Partitions, ","), gs.Load, w.describe(to), w.memNote(g, to))
	}
	return Move{Group: g.Name, To: gs.Partitions, Reason: reason}, true
}

// counts is the number of placed groups per partition.
func (w *world) counts(st State) []int {
	out := make([]int, len(w.parts))
	for _, gs := range st.Groups {
		for _, i := range w.resolve(gs.Partitions) {
			out[i]++
		}
	}
	return out
}

// rebalance makes the one move that lowers the score most, if any lowers
// it by more than MinGain.
func (w *world) rebalance(groups []Group, sets [][]int, st State, in Input, moved map[string]bool) (Move, bool) {
	bi, bestGain := -1, w.cfg.MinGain
	var bestTo []int
	count := w.counts(st)
	for gi := range groups {
		g := &groups[gi]
		gs := st.Groups[g.Name]
		if sets[gi] == nil || moved[g.Name] || in.Now.Sub(gs.Since) < w.cfg.MinDwell {
			continue
		}
		to, c, ok := w.best(g, sets[gi], gs.Load, count)
		if ok && -c > bestGain+1e-9 {
			bi, bestGain, bestTo = gi, -c, to
		}
	}
	if bi < 0 {
		return Move{}, false
	}
	g := &groups[bi]
	gs := st.Groups[g.Name]
	from := sets[bi]
	before := w.describe(from)
	w.take(g, bestTo, +1)
	w.add(g, from, gs.Load, -1)
	w.add(g, bestTo, gs.Load, +1)
	sets[bi] = bestTo
	fromNames := gs.Partitions
	gs.Partitions, gs.Since = w.names(bestTo), in.Now
	st.Groups[g.Name] = gs
	reason := fmt.Sprintf("moved from %s to %s: it uses %.1f CPUs; before %s; after %s; imbalance score down %.2f; %s",
		strings.Join(fromNames, ","), strings.Join(gs.Partitions, ","), gs.Load, before, w.describe(bestTo), bestGain, w.memNote(g, bestTo))
	return Move{Group: g.Name, From: fromNames, To: gs.Partitions, Reason: reason}, true
}

func (w *world) names(set []int) []string {
	out := make([]string, len(set))
	for k, i := range set {
		out[k] = w.parts[i].Name
	}
	return out
}

// describe says how loaded a set of partitions is, e.g.
// "node1 1.0 of 2 CPUs (50%)".
func (w *world) describe(set []int) string {
	parts := make([]string, len(set))
	for k, i := range set {
		c := w.parts[i].Capacity()
		parts[k] = fmt.Sprintf("%s %.1f of %.0f CPUs (%.0f%%)", w.parts[i].Name, w.load[i], c, 100*w.load[i]/c)
	}
	return strings.Join(parts, ", ")
}

// memNote says how much of the group's memory is already local to a set.
func (w *world) memNote(g *Group, set []int) string {
	total := g.MemTotal()
	if total == 0 {
		return "no memory yet"
	}
	local := float64(total) - w.remote(g, set)
	return fmt.Sprintf("%s of its %s memory local", mib(local), mib(float64(total)))
}

func mib(b float64) string { return fmt.Sprintf("%.0fMi", b/(1<<20)) }

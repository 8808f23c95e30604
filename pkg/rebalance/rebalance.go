// Package rebalance decides when a movable pinned workload leaves a NUMA
// node whose pinned workloads use much more CPU than another's, and which.
// It is pure: the CPU time each workload used and the clock come in, the
// state to keep and at most one move come out. The CPUs a moved workload
// goes to are the caller's to choose (pkg/decide, through pkg/cpualloc).
//
// Nothing oscillates, by construction rather than by tuning:
//   - an imbalance starts only above Config.Start held for Config.Sustain
//     samples in a row, and ends below the lower Config.Stop;
//   - a move never takes more than half the gap between the two nodes, so
//     the hot node stays at least as busy as the cold one: no move can make
//     the opposite imbalance out of a steady load;
//   - after a move the count starts again: the next needs a sustained
//     imbalance measured after it, and Config.Every since the last;
//   - a workload moved is not moved again within Config.Window.
package rebalance

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// Config holds the thresholds. Zero values are not defaults: use Default.
type Config struct {
	// Start is the ratio of the hot node's use to the cold node's above
	// which an imbalance counts; Stop, lower, the ratio below which it
	// ends. MinGap (CPUs) is the least difference that starts one, so two
	// nearly idle nodes are never "imbalanced"; below half of it, one ends.
	Start, Stop, MinGap float64
	// Sustain is how many samples in a row the imbalance must hold.
	Sustain int
	// SampleEvery is the least time between two samples (a reconcile
	// woken by an event between two does not count as one); Every the
	// least time between two moves; Window how long a moved workload
	// stays put.
	SampleEvery, Every, Window time.Duration
}

// Default: a node using half as much again as another, by at least one CPU,
// for three samples 10 s apart; one move a minute at most; a moved workload
// stays 30 minutes.
var Default = Config{Start: 1.5, Stop: 1.2, MinGap: 1, Sustain: 3,
	SampleEvery: 10 * time.Second, Every: time.Minute, Window: 30 * time.Minute}

// Holding is a pinned workload as the rebalancer sees it: the NUMA node of
// its CPUs (-1 when they span several, which then counts for none),
// whether it may move now, and its CPU time used so far.
type Holding struct {
	Name    string
	Node    int
	Movable bool
	Used    time.Duration
}

// Sample is one reading: the NUMA nodes with CPUs, and the holdings.
type Sample struct {
	Now      time.Time
	Nodes    []int
	Holdings []Holding
}

// State is what is kept between samples.
type State struct {
	At     time.Time                // the last sample
	Used   map[string]time.Duration // by workload, at At
	Hot    int                      // the pair being watched
	Cold   int
	Streak int  // samples in a row above Start, for Hot over Cold
	Active bool // an imbalance held Sustain samples and has not ended
	// LastMove is when the last move was made; Moved when each workload
	// still within Window was.
	LastMove time.Time
	Moved    map[string]time.Time
}

// Move is a workload to move from one node to another.
type Move struct {
	Workload string
	From, To int
	// Use is its use (CPUs) and Hot, Cold the two nodes' over the last
	// sample, for the Event.
	Use, Hot, Cold float64
}

// Step takes one sample. It returns the state to keep and, when an
// imbalance is sustained and a workload may go, the move; fits says
// whether a workload fits on a node (the caller's allocator), asked of
// candidates only. A sample closer than SampleEvery to the last is not
// taken: the state comes back as it was.
func Step(cfg Config, st State, s Sample, fits func(name string, node int) bool) (State, *Move) {
	if !st.At.IsZero() && s.Now.Sub(st.At) < cfg.SampleEvery && !s.Now.Before(st.At) {
		return st, nil
	}
	prev, dt := st.Used, s.Now.Sub(st.At).Seconds()
	st.At, st.Used = s.Now, make(map[string]time.Duration, len(s.Holdings))
	for _, h := range s.Holdings {
		st.Used[h.Name] = h.Used
	}
	st.Moved = recent(st.Moved, s.Now, cfg.Window)
	if prev == nil || dt <= 0 || len(s.Nodes) < 2 {
		st.Streak, st.Active = 0, false
		return st, nil
	}
	use := rates(prev, s.Holdings, dt)
	load := nodeLoad(s, use)
	hot, cold := extremes(s.Nodes, load)
	gap := load[hot] - load[cold]
	if hot != st.Hot || cold != st.Cold {
		st.Hot, st.Cold, st.Streak, st.Active = hot, cold, 0, false
	}
	switch {
	case st.Active && (gap < cfg.MinGap/2 || load[hot] < cfg.Stop*load[cold]):
		st.Streak, st.Active = 0, false
	case !st.Active && gap >= cfg.MinGap && load[hot] >= cfg.Start*load[cold]:
		st.Streak++
		st.Active = st.Streak >= cfg.Sustain
	case !st.Active:
		st.Streak = 0
	}
	if !st.Active || (!st.LastMove.IsZero() && s.Now.Sub(st.LastMove) < cfg.Every && !s.Now.Before(st.LastMove)) {
		return st, nil
	}
	m := pick(s.Holdings, use, st.Moved, hot, cold, gap, fits)
	if m == nil {
		return st, nil
	}
	m.Hot, m.Cold = load[hot], load[cold]
	st.LastMove, st.Streak, st.Active = s.Now, 0, false
	st.Moved = maps.Clone(st.Moved)
	if st.Moved == nil {
		st.Moved = map[string]time.Time{}
	}
	st.Moved[m.Workload] = s.Now
	return st, m
}

// pick is the movable workload on hot whose use is the largest that is no
// more than half the gap (so hot stays at least as busy as cold), not
// moved within the window, and that fits on cold; ties go by name.
func pick(hs []Holding, use map[string]float64, moved map[string]time.Time, hot, cold int, gap float64, fits func(string, int) bool) *Move {
	var best *Move
	for _, h := range slices.SortedFunc(slices.Values(hs), func(a, b Holding) int { return cmp.Compare(a.Name, b.Name) }) {
		u := use[h.Name]
		if _, recently := moved[h.Name]; !h.Movable || h.Node != hot || recently || u <= 0 || 2*u > gap {
			continue
		}
		if best != nil && u <= best.Use {
			continue
		}
		if fits(h.Name, cold) {
			best = &Move{Workload: h.Name, From: hot, To: cold, Use: u}
		}
	}
	return best
}

// rates is each workload's use, in CPUs, since the last sample: those not
// seen then, or whose counter went back (a cgroup made again), count none.
func rates(prev map[string]time.Duration, hs []Holding, dt float64) map[string]float64 {
	out := make(map[string]float64, len(hs))
	for _, h := range hs {
		if before, ok := prev[h.Name]; ok && h.Used >= before {
			out[h.Name] = (h.Used - before).Seconds() / dt
		}
	}
	return out
}

// nodeLoad sums the use of the holdings on each node.
func nodeLoad(s Sample, use map[string]float64) map[int]float64 {
	load := make(map[int]float64, len(s.Nodes))
	for _, n := range s.Nodes {
		load[n] = 0
	}
	for _, h := range s.Holdings {
		if _, ok := load[h.Node]; ok {
			load[h.Node] += use[h.Name]
		}
	}
	return load
}

// extremes are the busiest and the least busy node; ties go to the lower id.
func extremes(nodes []int, load map[int]float64) (hot, cold int) {
	sorted := slices.Sorted(slices.Values(nodes))
	hot, cold = sorted[0], sorted[0]
	for _, n := range sorted[1:] {
		if load[n] > load[hot] {
			hot = n
		}
		if load[n] < load[cold] {
			cold = n
		}
	}
	return hot, cold
}

// recent keeps the moves within window of now; a clock gone back keeps
// them all.
func recent(moved map[string]time.Time, now time.Time, window time.Duration) map[string]time.Time {
	var out map[string]time.Time
	for name, at := range moved {
		if now.Sub(at) < window || now.Before(at) {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[name] = at
		}
	}
	return out
}

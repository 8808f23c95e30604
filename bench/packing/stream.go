// Package packing replays one seeded stream of CPU-pinned pods, arriving and
// leaving, against a CPU allocator and measures how well it packs: how many
// pods it admits, how often a pod lands on one NUMA node (or L3, or socket)
// when one had room, how often a pod shares a physical core with another, and
// how long each decision takes. Any allocator can be plugged in, so Locus and
// kubelet see exactly the same requests.
package packing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Size is one pod size of a mix and its relative weight.
type Size struct {
	CPUs   int
	Weight int
}

// Mix is the distribution of pod sizes in a stream.
type Mix []Size

// MixedSizes is mostly small pods with some large ones, even and odd sizes,
// like a cluster of web services with a few databases and batch jobs.
var MixedSizes = Mix{{1, 20}, {2, 22}, {3, 4}, {4, 20}, {5, 2}, {6, 6}, {7, 2}, {8, 12}, {12, 5}, {16, 7}}

// EvenSizes is MixedSizes with whole cores only (odd sizes dropped), for
// policies that admit nothing else on SMT machines.
var EvenSizes = Mix{{2, 34}, {4, 28}, {6, 8}, {8, 15}, {12, 7}, {16, 8}}

// Mean is the mean pod size in CPUs.
func (m Mix) Mean() float64 {
	var sum, weights float64
	for _, s := range m {
		sum += float64(s.CPUs * s.Weight)
		weights += float64(s.Weight)
	}
	return sum / weights
}

func (m Mix) validate() error {
	if len(m) == 0 {
		return fmt.Errorf("mix: no sizes")
	}
	for _, s := range m {
		if s.CPUs < 1 || s.Weight < 1 {
			return fmt.Errorf("mix: size %d CPUs weight %d: both must be at least 1", s.CPUs, s.Weight)
		}
	}
	return nil
}

func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, s := range m {
		parts[i] = fmt.Sprintf("%d:%d", s.CPUs, s.Weight)
	}
	return strings.Join(parts, " ")
}

func (m Mix) draw(r *rand.Rand) int {
	total := 0
	for _, s := range m {
		total += s.Weight
	}
	x := r.IntN(total)
	for _, s := range m {
		if x < s.Weight {
			return s.CPUs
		}
		x -= s.Weight
	}
	panic("unreachable: draw past the total weight")
}

// StreamConfig describes a stream. Pods arrive as a Poisson process (one per
// time unit on average) and live an exponentially distributed time chosen so
// that the CPUs asked for at any moment average Load x Capacity.
type StreamConfig struct {
	Seed     uint64
	Pods     int
	Mix      Mix
	Capacity int     // CPUs the allocators may hand out
	Load     float64 // offered load; above 1 the node cannot hold every pod
}

// Event is one step of a stream: pod Pod arrives asking for CPUs, or leaves.
type Event struct {
	Pod    int
	CPUs   int
	Arrive bool
	At     float64
}

// Stream returns the events of cfg in time order. The same config always
// gives the same events.
func Stream(cfg StreamConfig) ([]Event, error) {
	if err := cfg.Mix.validate(); err != nil {
		return nil, err
	}
	if cfg.Pods < 1 || cfg.Capacity < 1 || !(cfg.Load > 0) || math.IsInf(cfg.Load, 0) {
		return nil, fmt.Errorf("stream: pods %d, capacity %d and load %v must be positive", cfg.Pods, cfg.Capacity, cfg.Load)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x10c05))
	meanLife := cfg.Load * float64(cfg.Capacity) / cfg.Mix.Mean()
	events := make([]Event, 0, 2*cfg.Pods)
	now := 0.0
	for id := 0; id < cfg.Pods; id++ {
		now += r.ExpFloat64()
		cpus := cfg.Mix.draw(r)
		events = append(events,
			Event{Pod: id, CPUs: cpus, Arrive: true, At: now},
			Event{Pod: id, CPUs: cpus, At: now + r.ExpFloat64()*meanLife})
	}
	// Stable, so a pod that leaves at the instant another arrives keeps the
	// order in which they were drawn.
	sort.SliceStable(events, func(i, j int) bool { return events[i].At < events[j].At })
	return events, nil
}

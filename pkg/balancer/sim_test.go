package balancer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"
)

// A small machine model for seeded simulations: groups with undulating
// demand share their partitions' CPUs fairly, memory follows a group to its
// nodes one interval after it moves (the agent migrates it), and the
// balancer sees only what the kernel would show: CPU time per group and per
// partition, memory per node.

type simGroup struct {
	name                  string
	base, amp, period, ph float64 // demand = base*(1+amp*sin(2πt/period+ph)) + noise
	threads               int
	mem                   uint64
}

type sim struct {
	parts  []Partition
	mem    map[int]NodeMemory
	groups []simGroup
	noise  float64
	rng    *rand.Rand
	// what the last decision put in force
	cpus   map[string]cpuset.CPUSet
	nodeOf map[string]map[int]uint64 // memory by node
}

func newSim(seed uint64, nparts, per int, groups []simGroup) *sim {
	parts, mem := machine(nparts, per, 12<<30)
	s := &sim{parts: parts, mem: mem, groups: groups, noise: 0.05, rng: rand.New(rand.NewPCG(seed, seed^0x9e37)),
		cpus: map[string]cpuset.CPUSet{}, nodeOf: map[string]map[int]uint64{}}
	for i, g := range groups {
		s.nodeOf[g.name] = map[int]uint64{i % nparts: g.mem} // first touch wherever it started
	}
	return s
}

func (s *sim) all() cpuset.CPUSet {
	all := cpuset.New()
	for _, p := range s.parts {
		all = all.Union(p.CPUs)
	}
	return all
}

// step runs one interval at time t and returns the balancer's input.
func (s *sim) step(t int, now time.Time) Input {
	demand := map[string]float64{}
	onPart := make([]float64, len(s.parts))
	for _, g := range s.groups {
		d := g.base*(1+g.amp*math.Sin(2*math.Pi*float64(t)/g.period+g.ph)) + s.noise*(s.rng.Float64()*2-1)
		demand[g.name] = math.Min(math.Max(d, 0), float64(g.threads))
		for i, sh := range s.spread(g.name) {
			onPart[i] += demand[g.name] * sh
		}
	}
	scale := make([]float64, len(s.parts))
	parts := slices.Clone(s.parts)
	for i := range parts {
		scale[i] = 1
		if c := parts[i].Capacity(); onPart[i] > c {
			scale[i] = c / onPart[i]
		}
		parts[i].Busy = math.Min(onPart[i], parts[i].Capacity())
	}
	in := Input{Now: now, Partitions: parts, Memory: s.mem}
	for _, g := range s.groups {
		var used float64
		for i, sh := range s.spread(g.name) {
			used += demand[g.name] * sh * scale[i]
		}
		in.Groups = append(in.Groups, Group{Name: g.name, CPU: used, Threads: g.threads, Current: s.current(g.name),
			Mem: s.nodeOf[g.name]})
	}
	return in
}

func (s *sim) current(name string) cpuset.CPUSet {
	if c, ok := s.cpus[name]; ok {
		return c
	}
	return s.all()
}

// spread is the share of a group's threads on each partition: even over
// the CPUs it may run on.
func (s *sim) spread(name string) []float64 {
	cur := s.current(name)
	out := make([]float64, len(s.parts))
	for i, p := range s.parts {
		out[i] = float64(p.CPUs.Intersection(cur).Size()) / float64(cur.Size())
	}
	return out
}

// apply puts a decision in force; memory reaches the new nodes at once
// (the next interval's measurement sees it there).
func (s *sim) apply(d Plan) {
	for _, p := range d.Placements {
		if len(p.Partitions) == 0 {
			continue
		}
		s.cpus[p.Group] = p.CPUs
		var total uint64
		for _, b := range s.nodeOf[p.Group] {
			total += b
		}
		m := map[int]uint64{}
		for _, n := range p.Nodes {
			m[n] = total / uint64(len(p.Nodes))
		}
		s.nodeOf[p.Group] = m
	}
}

type simRun struct {
	moves   [][]Move // per interval
	last    Plan
	history map[string][]string // each group's placements over time
}

func runSim(cfg Config, s *sim, intervals int, every time.Duration) simRun {
	var st State
	r := simRun{history: map[string][]string{}}
	for t := range intervals {
		d := Place(cfg, st, s.step(t, t0.Add(time.Duration(t)*every)))
		s.apply(d)
		st, r.last = d.State, d
		r.moves = append(r.moves, d.Moves)
		for _, p := range d.Placements {
			r.history[p.Group] = append(r.history[p.Group], strings.Join(p.Partitions, ","))
		}
	}
	return r
}

func undulating(rng *rand.Rand, n int, base, amp float64, mem uint64) []simGroup {
	var out []simGroup
	for i := range n {
		out = append(out, simGroup{name: fmt.Sprintf("g%02d", i), base: base * (0.8 + 0.4*rng.Float64()), amp: amp,
			period: 20 + 40*rng.Float64(), ph: 2 * math.Pi * rng.Float64(), threads: 4, mem: mem})
	}
	return out
}

func TestSimulationSettlesWithoutOscillation(t *testing.T) {
	const intervals, warm = 400, 60
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := DefaultConfig()
		s := newSim(seed, 4, 4, undulating(rng, 8, 1.5, 0.3, 512<<20))
		r := runSim(cfg, s, intervals, 10*time.Second)
		late := 0
		for t := warm; t < intervals; t++ {
			late += len(r.moves[t])
		}
		// Settled: after the warm-up at most one move per group in 340
		// intervals, while every group's load swings by ±30 %.
		if late > len(s.groups) {
			t.Errorf("seed %d: %d moves after interval %d, want at most %d", seed, late, warm, len(s.groups))
		}
		for g, h := range r.history {
			if back := pingPong(h, 30); back >= 0 {
				t.Errorf("seed %d: %s went back to %s at interval %d within 30 intervals of leaving it: %v",
					seed, g, h[back], back, compress(h))
			}
		}
		for _, p := range r.last.Partitions {
			if len(p.Groups) == 0 {
				t.Errorf("seed %d: partition %s starved: %+v", seed, p.Name, r.last.Partitions)
			}
		}
	}
}

func TestSimulationLargeGroupSpansAndStays(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		groups := append(undulating(rng, 4, 1, 0.2, 256<<20),
			simGroup{name: "big", base: 5, amp: 0.1, period: 30, threads: 8, mem: 2 << 30})
		s := newSim(seed, 4, 4, groups)
		r := runSim(DefaultConfig(), s, 200, 10*time.Second)
		h := r.history["big"]
		if n := len(strings.Split(h[len(h)-1], ",")); n != 2 {
			t.Fatalf("seed %d: big (5 CPUs on 4-CPU partitions) ends on %q, want two partitions", seed, h[len(h)-1])
		}
		if c := compress(h); len(c) > 2 {
			t.Errorf("seed %d: big moved more than once: %v", seed, c)
		}
		for _, p := range r.last.Partitions {
			if p.Predicted > 1.25*p.Capacity {
				t.Errorf("seed %d: %s overloaded: %+v", seed, p.Name, r.last.Partitions)
			}
		}
	}
}

func TestSimulationIdleGroupsLendTheirCPUs(t *testing.T) {
	// Two groups that want 3 CPUs each on 2-CPU partitions, two that go
	// idle: with overflow the busy ones get the idle partition's CPUs.
	groups := []simGroup{
		{name: "a", base: 3, period: 1e9, threads: 3, mem: 64 << 20},
		{name: "b", base: 3, period: 1e9, threads: 3, mem: 64 << 20},
	}
	for _, overflow := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Overflow, cfg.MinDwell = overflow, 24*time.Hour
		s := newSim(1, 2, 2, groups)
		s.noise = 0
		// pin both on node0 first, as if the others had been busy then
		st := settled(map[string]string{"a": "node0", "b": "node0"}, map[string]float64{"a": 1, "b": 1})
		s.cpus["a"], s.cpus["b"] = s.parts[0].CPUs, s.parts[0].CPUs
		var used float64
		for t := range 6 {
			in := s.step(t, t0.Add(time.Duration(t)*10*time.Second))
			used = in.Groups[0].CPU + in.Groups[1].CPU
			d := Place(cfg, st, in)
			s.apply(d)
			st = d.State
		}
		want := 2.0
		if overflow {
			want = 4.0
		}
		if math.Abs(used-want) > 1e-6 {
			t.Errorf("overflow %v: the busy groups use %.2f CPUs, want %.0f", overflow, used, want)
		}
	}
}

// pingPong returns the first interval where a group is back on a placement
// it left fewer than window intervals before, or -1.
func pingPong(h []string, window int) int {
	left := map[string]int{}
	for t := 1; t < len(h); t++ {
		if h[t] == h[t-1] {
			continue
		}
		left[h[t-1]] = t
		if at, ok := left[h[t]]; ok && h[t] != "" && t-at < window {
			return t
		}
	}
	return -1
}

func compress(h []string) []string {
	var out []string
	for _, p := range h {
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

package rebalance

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)

// fitsAll lets every workload go anywhere.
func fitsAll(string, int) bool { return true }

// world is workloads on two nodes, each using a given number of CPUs,
// advanced sample by sample as the agent would.
type world struct {
	node    map[string]int
	use     map[string]float64 // CPUs
	movable map[string]bool
	used    map[string]time.Duration
	now     time.Time
	st      State
}

func newWorld(spec map[string]struct {
	node    int
	use     float64
	movable bool
}) *world {
	w := &world{node: map[string]int{}, use: map[string]float64{}, movable: map[string]bool{}, used: map[string]time.Duration{}, now: t0}
	for name, s := range spec {
		w.node[name], w.use[name], w.movable[name] = s.node, s.use, s.movable
	}
	return w
}

// step advances the clock by dt, accrues each workload's use, takes a
// sample and applies the move it returns.
func (w *world) step(cfg Config, dt time.Duration, fits func(string, int) bool) *Move {
	w.now = w.now.Add(dt)
	s := Sample{Now: w.now, Nodes: []int{0, 1}}
	for name, u := range w.use {
		w.used[name] += time.Duration(u * float64(dt))
	}
	for _, name := range sortedKeys(w.node) {
		s.Holdings = append(s.Holdings, Holding{Name: name, Node: w.node[name], Movable: w.movable[name], Used: w.used[name]})
	}
	var m *Move
	w.st, m = Step(cfg, w.st, s, fits)
	if m != nil {
		w.node[m.Workload] = m.To
	}
	return m
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

type spec = map[string]struct {
	node    int
	use     float64
	movable bool
}

func TestStep(t *testing.T) {
	cfg := Default
	for _, tc := range []struct {
		name  string
		world spec
		// use, when set, is each sample's use of "a" (a spike, say).
		use     []float64
		samples int
		want    []string // the moves, in order, as workload@sample
		fits    func(string, int) bool
	}{
		{name: "hot and cold: the workload that evens it out moves once the imbalance held",
			world:   spec{"a": {0, 2, true}, "b": {0, 2, true}, "c": {0, 0.5, true}, "d": {1, 0.5, false}},
			samples: 6, want: []string{"a@4"}},
		{name: "balanced: nothing",
			world:   spec{"a": {0, 2, true}, "b": {1, 2, true}},
			samples: 10},
		{name: "a spike shorter than Sustain: nothing",
			world:   spec{"a": {0, 0, true}, "b": {0, 2, true}, "d": {1, 2, false}},
			use:     []float64{0, 0, 4, 4, 0, 0, 4, 4, 0, 0},
			samples: 10},
		{name: "immovable only: nothing",
			world:   spec{"a": {0, 3, false}, "b": {0, 3, false}, "d": {1, 0, false}},
			samples: 10},
		{name: "idle nodes under MinGap: nothing",
			world:   spec{"a": {0, 0.6, true}, "b": {0, 0.3, true}, "d": {1, 0, false}},
			samples: 10},
		{name: "one workload more than half the gap: nothing, it would only turn the imbalance round",
			world:   spec{"a": {0, 4, true}, "d": {1, 1, false}},
			samples: 10},
		{name: "no room on the cold node: nothing",
			world:   spec{"a": {0, 2, true}, "b": {0, 2, true}, "d": {1, 0, false}},
			samples: 10, fits: func(string, int) bool { return false }},
		{name: "rate limit: a second move waits Every and a sustained imbalance after the first",
			world:   spec{"a": {0, 1, true}, "b": {0, 1, true}, "c": {0, 1, true}, "e": {0, 1, true}, "d": {1, 0, false}},
			samples: 16, want: []string{"a@4", "b@10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(tc.world)
			fits := tc.fits
			if fits == nil {
				fits = fitsAll
			}
			var got []string
			for i := 1; i <= tc.samples; i++ {
				if tc.use != nil {
					w.use["a"] = tc.use[i-1]
				}
				if m := w.step(cfg, cfg.SampleEvery, fits); m != nil {
					got = append(got, m.Workload+"@"+strconv.Itoa(i))
					if 2*m.Use > m.Hot-m.Cold+1e-9 || m.From == m.To {
						t.Errorf("move %+v takes more than half the gap", m)
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("moves %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("moves %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// Hysteresis: once an imbalance is sustained, a dip to between Stop and
// Start does not end it, so the move comes; a drop below Stop does.
func TestStepHysteresis(t *testing.T) {
	cfg := Default
	cfg.Every = 0
	w := newWorld(spec{"a": {0, 1.5, true}, "b": {0, 1.5, true}, "d": {1, 2, false}})
	fits := func(string, int) bool { return false } // hold the moves: watch the state
	for i := 0; i < 4; i++ {
		w.step(cfg, cfg.SampleEvery, fits)
	}
	if !w.st.Active {
		t.Fatalf("3 CPUs against 2 for %d samples is not an imbalance: %+v", cfg.Sustain, w.st)
	}
	w.use["a"], w.use["b"] = 1.3, 1.3 // 2.6 against 2: below Start, above Stop
	w.step(cfg, cfg.SampleEvery, fits)
	w.step(cfg, cfg.SampleEvery, fits)
	if !w.st.Active {
		t.Fatalf("a ratio between Stop and Start ended the imbalance: %+v", w.st)
	}
	w.use["a"], w.use["b"] = 1.1, 1.1 // 2.2 against 2: below Stop
	w.step(cfg, cfg.SampleEvery, fits)
	if w.st.Active || w.st.Streak != 0 {
		t.Fatalf("a ratio below Stop did not end the imbalance: %+v", w.st)
	}
	// Starting again takes a sustained ratio above Start, not above Stop.
	w.use["a"], w.use["b"] = 1.3, 1.3
	for i := 0; i < 5; i++ {
		w.step(cfg, cfg.SampleEvery, fits)
	}
	if w.st.Active || w.st.Streak != 0 {
		t.Fatalf("a ratio between Stop and Start started an imbalance: %+v", w.st)
	}
}

// Samples closer than SampleEvery are not taken: a burst of reconciles is
// one sample. The first sample only starts the counters; Sustain more make
// the move.
func TestStepSampleEvery(t *testing.T) {
	w := newWorld(spec{"a": {0, 2, true}, "b": {0, 2, true}, "d": {1, 0, false}})
	want := Default.Sustain * int(Default.SampleEvery/time.Second)
	for i := 0; i <= want; i++ {
		m := w.step(Default, time.Second, fitsAll)
		if (m != nil) != (i == want) {
			t.Fatalf("reconcile %d, 1 s apart: move %+v; want one at reconcile %d only", i, m, want)
		}
	}
}

// Whatever the use does, no workload moves twice within Window (so never
// back and forth), no two moves come closer than Every, and each move
// leaves the node it left at least as busy as the one it went to, by the
// sample that decided it.
func TestStepNeverOscillates(t *testing.T) {
	cfg := Default
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		sp := spec{}
		for i := range 2 + r.IntN(6) {
			sp[string(rune('a'+i))] = struct {
				node    int
				use     float64
				movable bool
			}{r.IntN(2), r.Float64() * 4, r.IntN(4) > 0}
		}
		w := newWorld(sp)
		last := map[string]time.Time{}
		var lastMove time.Time
		for range 400 {
			for name := range w.use {
				if r.IntN(5) == 0 { // the use changes now and then, by any amount
					w.use[name] = r.Float64() * 4
				}
			}
			dt := cfg.SampleEvery / 2 * time.Duration(1+r.IntN(4))
			m := w.step(cfg, dt, func(string, int) bool { return r.IntN(3) > 0 })
			if m == nil {
				continue
			}
			if at, ok := last[m.Workload]; ok && w.now.Sub(at) < cfg.Window {
				t.Fatalf("seed %d: %s moved again %v after its last move, within the window %v", seed, m.Workload, w.now.Sub(at), cfg.Window)
			}
			if !lastMove.IsZero() && w.now.Sub(lastMove) < cfg.Every {
				t.Fatalf("seed %d: two moves %v apart", seed, w.now.Sub(lastMove))
			}
			if m.Hot-m.Use < m.Cold+m.Use-1e-9 {
				t.Fatalf("seed %d: move %+v turns the imbalance round", seed, m)
			}
			last[m.Workload], lastMove = w.now, w.now
		}
	}
}

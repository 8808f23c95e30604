package balancer

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"
)

func TestFirstPlacementTwoPerNodeFollowingMemory(t *testing.T) {
	parts, mem := machine(2, 2, 8<<30)
	parts[0].Busy, parts[1].Busy = 2, 2 // the four groups, spread over every CPU
	in := Input{Now: t0, Partitions: parts, Memory: mem, Groups: []Group{
		group("a", 1, 0, 100*mi), group("b", 1, 100*mi), group("c", 1, 50*mi, 50*mi), group("d", 1)}}
	d := Place(oneWindow(), State{}, in)
	want := map[string]string{"a": "node1", "b": "node0", "c": "node0", "d": "node1"}
	if got := placements(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("placements %v, want %v", got, want)
	}
	mustEqual(t, "first placements are not moves of placed groups: moves", len(d.Moves), 4)
	for _, m := range d.Moves {
		if len(m.From) != 0 || !strings.HasPrefix(m.Reason, "placed on "+m.To[0]) {
			t.Errorf("move %+v: want a first placement with its reason", m)
		}
	}
	for _, p := range d.Partitions {
		mustEqual(t, p.Name+" predicted load", p.Predicted, 2.0)
	}
	pa := d.Placements[0]
	mustEqual(t, "a cpus", pa.CPUs.String(), "2-3")
	mustEqual(t, "a nodes", len(pa.Nodes) == 1 && pa.Nodes[0] == 1, true)
	mustEqual(t, "a local percent", pa.LocalPercent, 100)
	mustEqual(t, "c local percent", d.Placements[2].LocalPercent, 50)
	// Nothing changes on the next interval with the same load.
	in.Now = in.Now.Add(time.Hour)
	d2 := Place(oneWindow(), d.State, in)
	mustEqual(t, "moves at rest", len(d2.Moves), 0)
	if !reflect.DeepEqual(placements(d2), want) {
		t.Fatalf("placements moved at rest: %v", placements(d2))
	}
}

func TestLargeGroupSpansNearestPartitions(t *testing.T) {
	parts, mem := machine(4, 2, 8<<30)
	in := Input{Now: t0, Partitions: parts, Memory: mem, Distance: twoSockets,
		Groups: []Group{{Name: "big", CPU: 3.2, Threads: 8}, {Name: "small", CPU: 0.5}}}
	d := Place(oneWindow(), State{}, in)
	got := placements(d)
	// The span stays on one socket (distance 21, not 31).
	mustEqual(t, "big", got["big"], "node0,node1")
	mustEqual(t, "big cpus", d.Placements[0].CPUs.String(), "0-3")
	mustEqual(t, "small goes where nothing runs", got["small"], "node2")
	if !strings.HasPrefix(d.Moves[0].Reason, "spans node0,node1: it uses 3.2 CPUs") {
		t.Errorf("reason %q", d.Moves[0].Reason)
	}
	// A group cannot use more CPUs than it has threads: two fit one node.
	in.Groups = []Group{{Name: "big", CPU: 3.2, Threads: 2}}
	mustEqual(t, "two threads", placements(Place(oneWindow(), State{}, in))["big"], "node0")
}

// settled returns a state where the named groups sit on the given
// partitions since t0, with loads as measured.
func settled(at map[string]string, loads map[string]float64) State {
	st := State{Groups: map[string]GroupState{}}
	for g, p := range at {
		st.Groups[g] = GroupState{Partitions: strings.Split(p, ","), Since: t0, Load: loads[g]}
	}
	return st
}

func TestMovesNeedDwellGainAndCheapMemory(t *testing.T) {
	parts, mem := machine(2, 2, 8<<30)
	node0 := cpuset.New(0, 1)
	node1 := cpuset.New(2, 3)
	cases := []struct {
		name    string
		now     time.Duration
		a, b, c float64 // loads: a and b on node0, c on node1
		memGiB  uint64  // of a and b, on node0
		want    string  // where a ends up ("" : no move)
	}{
		{name: "imbalanced after the dwell", now: 2 * time.Minute, a: 1, b: 1, c: 0.2, memGiB: 1, want: "node1"},
		{name: "within the dwell", now: 30 * time.Second, a: 1, b: 1, c: 0.2, memGiB: 1},
		{name: "too much memory to move", now: 2 * time.Minute, a: 1, b: 1, c: 0.2, memGiB: 4},
		{name: "gain below the threshold", now: 2 * time.Minute, a: 1, b: 0.3, c: 0.9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := append([]Partition(nil), parts...)
			p[0].Busy, p[1].Busy = tc.a+tc.b, tc.c
			loads := map[string]float64{"a": tc.a, "b": tc.b, "c": tc.c}
			st := settled(map[string]string{"a": "node0", "b": "node0", "c": "node1"}, loads)
			in := Input{Now: t0.Add(tc.now), Partitions: p, Memory: mem, Groups: []Group{
				{Name: "a", CPU: tc.a, Current: node0, Mem: map[int]uint64{0: tc.memGiB << 30}},
				{Name: "b", CPU: tc.b, Current: node0, Mem: map[int]uint64{0: tc.memGiB << 30}},
				{Name: "c", CPU: tc.c, Current: node1}}}
			d := Place(oneWindow(), st, in)
			if tc.want == "" {
				if len(d.Moves) != 0 {
					t.Fatalf("moves %+v, want none", d.Moves)
				}
				return
			}
			mustEqual(t, "moves", len(d.Moves), 1)
			m := d.Moves[0]
			mustEqual(t, "moved", m.Group+" to "+strings.Join(m.To, ","), "a to "+tc.want)
			if !strings.Contains(m.Reason, "moved from node0 to node1: it uses 1.0 CPUs; before node0 2.0 of 2 CPUs (100%)") {
				t.Errorf("reason %q", m.Reason)
			}
			mustEqual(t, "since", d.State.Groups["a"].Since, in.Now)
		})
	}
}

func TestAtMostMaxMovesPerInterval(t *testing.T) {
	for _, k := range []int{0, 1, 2, 3} {
		parts, mem := machine(4, 2, 8<<30)
		parts[0].Busy = 4
		at := map[string]string{}
		loads := map[string]float64{}
		var groups []Group
		for _, g := range []string{"a", "b", "c", "d"} {
			at[g], loads[g] = "node0", 1
			groups = append(groups, Group{Name: g, CPU: 1, Current: parts[0].CPUs})
		}
		cfg := oneWindow()
		cfg.MaxMoves = k
		d := Place(cfg, settled(at, loads), Input{Now: t0.Add(time.Hour), Partitions: parts, Memory: mem, Groups: groups})
		mustEqual(t, "moves", len(d.Moves), k)
		seen := map[string]bool{}
		for _, m := range d.Moves {
			if seen[m.Group] || seen[m.To[0]] {
				t.Fatalf("K=%d: %+v moves a group twice or two groups to one partition", k, d.Moves)
			}
			seen[m.Group], seen[m.To[0]] = true, true
		}
	}
}

func TestMemoryMustFit(t *testing.T) {
	parts, mem := machine(2, 2, 8<<30)
	parts[0].Busy = 1.5 // something else runs on node0
	mem[1] = NodeMemory{Total: 16 << 30, Free: 100 * mi}
	in := Input{Now: t0, Partitions: parts, Memory: mem, Groups: []Group{group("a", 1, 1<<30)}}
	in.Partitions[0].Busy += 0.5
	in.Partitions[1].Busy += 0.5
	mustEqual(t, "node1 lacks room for its 1Gi", placements(Place(oneWindow(), State{}, in))["a"], "node0")
	in.Groups = []Group{group("a", 1, 0, 1<<30)}
	mustEqual(t, "its memory is on node1 already", placements(Place(oneWindow(), State{}, in))["a"], "node1")
	mem[1] = NodeMemory{Total: 16 << 30, Free: 8 << 30}
	in.Groups = []Group{group("a", 1, 1<<30)}
	mustEqual(t, "with room, the idle node", placements(Place(oneWindow(), State{}, in))["a"], "node1")
}

func TestOverflowHysteresis(t *testing.T) {
	parts, mem := machine(2, 2, 8<<30)
	cfg := oneWindow()
	cfg.MinDwell = 24 * time.Hour // placements stay: only overflow reacts
	cfg.Smoothing = 1
	st := settled(map[string]string{"a": "node0", "b": "node0", "c": "node1"}, nil)
	steps := []struct {
		ab, c float64 // load of a and b each, and of c
		want  bool    // node0 overflows
	}{
		{ab: 1.5, c: 0, want: true},    // 150 %, node1 idle
		{ab: 0.8, c: 0, want: true},    // 80 %: still above the stop mark
		{ab: 0.7, c: 0, want: false},   // 70 %: stops
		{ab: 0.8, c: 0, want: false},   // 80 %: below the start mark
		{ab: 1.5, c: 1.8, want: false}, // no room on node1
		{ab: 1.5, c: 1.0, want: true},  // room again
	}
	for i, s := range steps {
		// a and b run on node0, or spread over every CPU while overflowing.
		cur := parts[0].CPUs
		p := append([]Partition(nil), parts...)
		p[0].Busy, p[1].Busy = min(2*s.ab, 2), s.c
		if st.Overflow["node0"] {
			cur = cpuset.New(0, 1, 2, 3)
			p[0].Busy, p[1].Busy = s.ab, s.ab+s.c
		}
		in := Input{Now: t0.Add(time.Duration(i) * time.Minute), Partitions: p, Memory: mem, Groups: []Group{
			{Name: "a", CPU: s.ab, Current: cur}, {Name: "b", CPU: s.ab, Current: cur}, {Name: "c", CPU: s.c, Current: parts[1].CPUs}}}
		d := Place(cfg, st, in)
		mustEqual(t, "step overflow", d.State.Overflow["node0"], s.want)
		wantCPUs := "0-1"
		if s.want {
			wantCPUs = "0-3"
		}
		mustEqual(t, "a's cpus", d.Placements[0].CPUs.String(), wantCPUs)
		mustEqual(t, "a's nodes stay node0", len(d.Placements[0].Nodes) == 1 && d.Placements[0].Nodes[0] == 0, true)
		mustEqual(t, "c never overflows", d.Placements[2].Overflow, false)
		st = d.State
	}
	cfg.Overflow = false
	d := Place(cfg, settled(map[string]string{"a": "node0"}, nil), Input{Now: t0, Partitions: parts, Memory: mem,
		Groups: []Group{{Name: "a", CPU: 3, Current: parts[0].CPUs}}})
	mustEqual(t, "overflow off", d.Placements[0].CPUs.String(), "0-1")
}

func TestAllowedCPUsAndPlacementDetails(t *testing.T) {
	parts, mem := machine(2, 2, 8<<30)
	in := Input{Now: t0, Partitions: parts, Memory: mem, Groups: []Group{{Name: "be", CPU: 1, Allowed: cpuset.New(1, 2, 3)}}}
	d := Place(oneWindow(), State{}, in)
	mustEqual(t, "placed where it may use most", placements(d)["be"], "node1")
	in.Groups[0].Allowed = cpuset.New(1)
	d = Place(oneWindow(), State{}, in)
	mustEqual(t, "only node0 allowed", placements(d)["be"], "node0")
	mustEqual(t, "cpus within allowed", d.Placements[0].CPUs.String(), "1")
	in.Groups[0].Allowed = cpuset.New(9)
	d = Place(oneWindow(), State{}, in)
	mustEqual(t, "nowhere allowed: not placed", len(d.Placements[0].Partitions), 0)
	mustEqual(t, "no move", len(d.Moves), 0)
}

func TestBackgroundLoadAndVanishedPartitions(t *testing.T) {
	parts, mem := machine(2, 2, 8<<30)
	parts[0].Busy, parts[1].Busy = 2.0, 0.5 // a (1 CPU over all four) plus 1.5 of something else on node0
	in := Input{Now: t0, Partitions: parts, Memory: mem, Groups: []Group{group("a", 1)}}
	d := Place(oneWindow(), State{}, in)
	mustEqual(t, "away from the busy node", placements(d)["a"], "node1")
	mustEqual(t, "background of node0", d.State.Background["node0"], 1.5)
	st := settled(map[string]string{"a": "node7", "gone": "node0"}, nil)
	d = Place(oneWindow(), st, in)
	mustEqual(t, "a partition that is gone: placed again", len(d.Moves), 1)
	mustEqual(t, "placed again", placements(d)["a"], "node1")
	if _, ok := d.State.Groups["gone"]; ok {
		t.Fatal("a group no longer measured is kept in the state")
	}
}

func TestPlaceIsDeterministic(t *testing.T) {
	parts, mem := machine(4, 4, 8<<30)
	var groups []Group
	for i, name := range []string{"q", "w", "e", "r", "t", "y", "u", "i"} {
		groups = append(groups, group(name, float64(i%3)+0.5, uint64(i)*mi, uint64(8-i)*mi))
	}
	in := Input{Now: t0, Partitions: parts, Memory: mem, Distance: twoSockets, Groups: groups}
	a := Place(oneWindow(), State{}, in)
	rev := append([]Group(nil), groups...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	in.Groups = rev
	b := Place(oneWindow(), State{}, in)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the order of groups changed the decision:\n%+v\n%+v", a.Placements, b.Placements)
	}
}

func TestPlacementsFromState(t *testing.T) {
	parts, _ := machine(2, 2, 8<<30)
	st := State{Groups: map[string]GroupState{"a": {Partitions: []string{"node1"}}, "b": {Partitions: []string{"node0"}},
		"gone": {Partitions: []string{"node9"}}}, Overflow: map[string]bool{"node0": true}}
	ps := Placements(st, parts, []Group{{Name: "gone"}, {Name: "b", Allowed: cpuset.New(0, 1, 2)}, {Name: "a"}, {Name: "new"}})
	var got []string
	for _, p := range ps {
		got = append(got, p.Group+"="+strings.Join(p.Partitions, ",")+":"+p.CPUs.String())
	}
	want := []string{"a=node1:2-3", "b=node0:0-2", "gone=:", "new=:"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("placements %v, want %v", got, want)
	}
}

func TestFirstPlacementWaitsForWindows(t *testing.T) {
	parts, mem := machine(2, 2, 8<<30)
	in := Input{Now: t0, Partitions: parts, Memory: mem, Groups: []Group{group("a", 1)}}
	var st State
	for i := 1; i <= 3; i++ {
		d := Place(DefaultConfig(), st, in)
		if placed := len(d.Placements[0].Partitions) > 0; placed != (i == 3) {
			t.Fatalf("window %d: placed %v, want a placement at the third window only", i, placed)
		}
		st = d.State
		in.Now = in.Now.Add(10 * time.Second)
	}
	mustEqual(t, "windows kept at the minimum", st.Groups["a"].Windows, 3)
}

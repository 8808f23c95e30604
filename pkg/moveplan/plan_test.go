package moveplan

import (
	"errors"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

type holdingRow struct {
	name, cpus string
	movable    bool
	resident   map[int]uint64
}

func TestMakeTable(t *testing.T) {
	topo := fixture.MustBuild(twoNodes16)
	cases := []struct {
		name     string
		holdings []holdingRow
		request  int
		moves    []string // "NAME: FROM -> TO"
		result   string
		wantErr  error
		errHas   string
	}{
		{name: "fits without moves", holdings: []holdingRow{{"a", "0-3", true, nil}}, request: 4,
			result: "4-7"},
		{name: "fragmented: the one with less memory moves",
			holdings: []holdingRow{{"a", "0-3", true, map[int]uint64{0: 1 * gib}}, {"b", "8-11", true, map[int]uint64{1: 2 * gib}}},
			request:  8, moves: []string{"a: 0-3 -> 12-15"}, result: "0-7"},
		{name: "an immovable workload in the way: the other moves",
			holdings: []holdingRow{{"a", "0-3", false, nil}, {"b", "8-11", true, map[int]uint64{1: 4 * gib}}},
			request:  8, moves: []string{"b: 8-11 -> 4-7"}, result: "8-15"},
		{name: "fewest CPUs, then fewest bytes",
			holdings: []holdingRow{
				{"x", "0-1", true, map[int]uint64{0: 3 * gib}}, {"y", "2-3", true, map[int]uint64{0: 1 * gib}},
				{"z", "4-5", true, map[int]uint64{0: 2 * gib}}, {"w", "8-11", true, nil}},
			request: 6, moves: []string{"y: 2-3 -> 12-13", "z: 4-5 -> 14-15"}, result: "2-7"},
		{name: "none possible: nothing movable",
			holdings: []holdingRow{{"a", "0-3", false, nil}, {"b", "8-11", false, nil}},
			request:  8, wantErr: ErrNoMoves, errHas: "no movable workload"},
		{name: "none possible: too few CPUs on any node",
			holdings: []holdingRow{{"a", "0-5", false, nil}, {"b", "8-11", true, nil}, {"c", "12-13", false, nil}},
			request:  8, wantErr: ErrNoMoves, errHas: "no group of 1 node(s) has 8 free CPUs (at most 6)"},
		{name: "none possible: no room elsewhere",
			holdings: []holdingRow{{"a", "0-3", true, nil}, {"b", "8-13", false, nil}},
			request:  8, wantErr: ErrNoMoves, errHas: "have no room on the other nodes"},
		{name: "whole cores stay whole: no whole core free for the move",
			holdings: []holdingRow{{"a", "0-1", true, nil}, {"c", "2-5", false, nil}, {"b", "8", false, nil}, {"d", "11-15", false, nil}},
			request:  4, wantErr: ErrNoMoves, errHas: "find no room"},
		{name: "holdings overlap", holdings: []holdingRow{{"a", "0-3", true, nil}, {"b", "3-4", true, nil}},
			request: 8, wantErr: ErrInvalid, errHas: `"b": CPUs 3 are another holding's`},
		{name: "a CPU the machine lacks", holdings: []holdingRow{{"a", "0-3,40", true, nil}},
			request: 8, wantErr: ErrInvalid, errHas: "CPUs 40 are not on this machine"},
		{name: "a name twice", holdings: []holdingRow{{"a", "0", true, nil}, {"a", "1", true, nil}},
			request: 8, wantErr: ErrInvalid, errHas: `"a" named twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Request: cpualloc.Request{CPUs: tc.request}}
			for _, h := range tc.holdings {
				in.Holdings = append(in.Holdings, Holding{Name: h.name, CPUs: cpus(t, h.cpus), Movable: h.movable, Resident: h.resident})
			}
			plan, err := Make(topo, in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want %v containing %q", err, tc.wantErr, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, mv := range plan.Moves {
				got = append(got, mv.Workload+": "+mv.From.String()+" -> "+mv.To.String())
			}
			if strings.Join(got, "; ") != strings.Join(tc.moves, "; ") {
				t.Errorf("moves %q, want %q", got, tc.moves)
			}
			if plan.Result.CPUs.String() != tc.result {
				t.Errorf("request placed on %s, want %s", plan.Result.CPUs, tc.result)
			}
			checkReplay(t, topo, in, plan)
		})
	}
}

// TestMemoryFollowsTheMove holds that a moved workload's memory must fit
// its new node when memory is accounted, and that it leaves the old one.
func TestMemoryFollowsTheMove(t *testing.T) {
	topo := fixture.MustBuild(twoNodes16)
	held := map[int]cpualloc.Memory{0: {Bytes: 3 * gib}}
	in := Input{
		Holdings: []Holding{{Name: "a", CPUs: cpus(t, "0-3"), Movable: true, Memory: cpualloc.Memory{Bytes: 3 * gib}, MemHeld: held,
			Resident: map[int]uint64{0: 3 * gib}}, {Name: "b", CPUs: cpus(t, "8-11"), Movable: false}},
		Request: cpualloc.Request{CPUs: 8, Memory: cpualloc.Memory{Bytes: 4 * gib}},
	}
	in.State.Free = map[int]cpualloc.Memory{0: {Bytes: 3 * gib}, 1: {Bytes: 2 * gib}}
	if _, err := Make(topo, in); !errors.Is(err, ErrNoMoves) {
		t.Fatalf("node 1 has 2 GiB free for a's 3 GiB: got %v, want no moves", err)
	}
	in.State.Free[1] = cpualloc.Memory{Bytes: 6 * gib}
	plan, err := Make(topo, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Moves) != 1 || plan.Moves[0].To.String() != "12-15" || plan.Moves[0].Bytes != 3*gib ||
		plan.Result.CPUs.String() != "0-7" || plan.Result.MemHeld[0].Bytes != 4*gib {
		t.Fatalf("plan %+v", plan)
	}
	checkReplay(t, topo, in, plan)
}

// TestStateCountsBeyondHoldings holds that CPUs taken in State but held by
// no named workload are never moved onto.
func TestStateCountsBeyondHoldings(t *testing.T) {
	topo := fixture.MustBuild(twoNodes16)
	in := Input{
		State:    cpualloc.State{Exclusive: cpualloc.NewBits(12, 13, 14, 15)},
		Holdings: []Holding{{Name: "a", CPUs: cpus(t, "0-3"), Movable: true}, {Name: "b", CPUs: cpus(t, "8-9"), Movable: true}},
		Request:  cpualloc.Request{CPUs: 8},
	}
	plan, err := Make(topo, in)
	if !errors.Is(err, ErrNoMoves) {
		t.Fatalf("got %+v, %v: a's 4 CPUs have only 10-11 free on node 1", plan, err)
	}
}

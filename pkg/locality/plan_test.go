package locality

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/sloconfig"
)

const testPage = 4096

// nodesFree builds a machine whose nodes each hold 1 GiB with the given free
// pages.
func nodesFree(free ...uint64) map[int]NodeMemory {
	out := map[int]NodeMemory{}
	for id, f := range free {
		out[id] = NodeMemory{Total: 1 << 30, Free: f * testPage}
	}
	return out
}

func TestMakePlan(t *testing.T) {
	noMargin := Margin{}
	tests := []struct {
		name        string
		in          PlanInput
		skipped     string
		moves       map[int][]Move // by pid
		procSkipped map[int]string
		stopped     []int
	}{
		{
			name:    "one node",
			in:      PlanInput{Local: []int{0}, Nodes: nodesFree(1000), Processes: []ProcessPages{{PID: 1, Pages: NodePages{0: 10}}}},
			skipped: ReasonNoTargetNUMA,
		},
		{
			name:    "cpuset on every node",
			in:      PlanInput{Local: []int{1, 0}, Nodes: nodesFree(1000, 1000), Processes: []ProcessPages{{PID: 1, Pages: NodePages{0: 10, 1: 10}}}},
			skipped: ReasonNoTargetNUMA,
		},
		{
			name:    "policy none",
			in:      PlanInput{Policy: sloconfig.LocalityNone, Local: []int{0}, Nodes: nodesFree(1000, 1000), Processes: []ProcessPages{{PID: 1, Pages: NodePages{1: 10}}}},
			skipped: ReasonPolicyNone,
		},
		{
			name:  "one local node takes everything",
			in:    PlanInput{Local: []int{0}, Nodes: nodesFree(100000, 10), Processes: []ProcessPages{{PID: 7, Pages: NodePages{0: 43, 1: 57}}}},
			moves: map[int][]Move{7: {{From: 1, To: 0, Pages: 57}}},
		},
		{
			name: "two local nodes share by room",
			in: PlanInput{Local: []int{0, 1}, Nodes: nodesFree(12000, 4000, 0),
				Processes: []ProcessPages{{PID: 20, Pages: NodePages{2: 3000}}, {PID: 10, Pages: NodePages{2: 1000}}}},
			moves: map[int][]Move{
				10: {{From: 2, To: 0, Pages: 750}, {From: 2, To: 1, Pages: 250}},
				20: {{From: 2, To: 0, Pages: 2250}, {From: 2, To: 1, Pages: 750}},
			},
		},
		{
			name: "several remote nodes",
			in: PlanInput{Local: []int{0}, Nodes: nodesFree(100000, 1, 1, 1),
				Processes: []ProcessPages{{PID: 3, Pages: NodePages{0: 5, 1: 7, 3: 9}}}},
			moves: map[int][]Move{3: {{From: 1, To: 0, Pages: 7}, {From: 3, To: 0, Pages: 9}}},
		},
		{
			name: "margin stops a partial move",
			in: PlanInput{Local: []int{0}, Nodes: nodesFree(1000+16384, 0), Margin: Margin{MinBytes: 64 << 20},
				Processes: []ProcessPages{{PID: 1, Pages: NodePages{1: 600}}, {PID: 2, Pages: NodePages{1: 3000}}}},
			moves:   map[int][]Move{1: {{From: 1, To: 0, Pages: 600}}, 2: {{From: 1, To: 0, Pages: 400}}},
			stopped: []int{0},
		},
		{
			name: "target already below the margin",
			in: PlanInput{Local: []int{0}, Nodes: nodesFree(100, 5000), Margin: DefaultMargin,
				Processes: []ProcessPages{{PID: 1, Pages: NodePages{1: 600}}}},
			moves:   map[int][]Move{1: nil},
			stopped: []int{0},
		},
		{
			name: "process bound to a remote node is skipped",
			in: PlanInput{Local: []int{0}, Nodes: nodesFree(100000, 100000),
				Processes: []ProcessPages{
					{PID: 1, Pages: NodePages{0: 10, 1: 300}, Held: NodePages{1: 300}, HeldBy: "bind:1"},
					{PID: 2, Pages: NodePages{1: 500}, Held: NodePages{1: 200}, HeldBy: "interleave:0-1"},
				}},
			moves:       map[int][]Move{1: nil, 2: {{From: 1, To: 0, Pages: 300}}},
			procSkipped: map[int]string{1: "memory policy bind:1 keeps its memory on remote numa"},
		},
		{
			name:  "nothing remote",
			in:    PlanInput{Local: []int{0}, Nodes: nodesFree(100000, 100000), Processes: []ProcessPages{{PID: 1, Pages: NodePages{0: 10}}}},
			moves: map[int][]Move{1: nil},
		},
		{
			name: "cpu-only local node takes no pages",
			in: PlanInput{Local: []int{0, 2}, Nodes: nodesFree(100000, 100000),
				Processes: []ProcessPages{{PID: 1, Pages: NodePages{1: 10}}}},
			moves: map[int][]Move{1: {{From: 1, To: 0, Pages: 10}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.PageSize = testPage
			if in.Margin == (Margin{}) {
				in.Margin = noMargin
			}
			plan, err := MakePlan(in)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Skipped != tc.skipped {
				t.Fatalf("skipped %q, want %q", plan.Skipped, tc.skipped)
			}
			if tc.skipped != "" {
				if len(plan.Processes) != 0 {
					t.Errorf("skipped plan has processes %+v", plan.Processes)
				}
				return
			}
			got := map[int][]Move{}
			for _, pp := range plan.Processes {
				got[pp.PID] = pp.Moves
				if pp.Skipped != tc.procSkipped[pp.PID] {
					t.Errorf("pid %d skipped %q, want %q", pp.PID, pp.Skipped, tc.procSkipped[pp.PID])
				}
			}
			if !reflect.DeepEqual(got, tc.moves) {
				t.Errorf("moves %+v, want %+v", got, tc.moves)
			}
			if !reflect.DeepEqual(plan.Stopped, tc.stopped) {
				t.Errorf("stopped %v, want %v", plan.Stopped, tc.stopped)
			}
			var want uint64
			for _, ms := range tc.moves {
				for _, m := range ms {
					want += m.Pages
				}
			}
			if plan.Pages() != want {
				t.Errorf("Pages() = %d, want %d", plan.Pages(), want)
			}
		})
	}
}

func TestMakePlanRejectsBadInput(t *testing.T) {
	good := PlanInput{Local: []int{0}, Nodes: nodesFree(10, 10), PageSize: testPage}
	tests := []struct {
		name   string
		change func(*PlanInput)
		want   string
	}{
		{"no local", func(in *PlanInput) { in.Local = nil }, "no local numa"},
		{"no nodes", func(in *PlanInput) { in.Nodes = nil }, "no memory node"},
		{"page size", func(in *PlanInput) { in.PageSize = 0 }, "page size"},
		{"policy", func(in *PlanInput) { in.Policy = "always" }, `unknown policy "always"`},
		{"free above total", func(in *PlanInput) { in.Nodes = map[int]NodeMemory{0: {Total: 1, Free: 2}} }, "node 0 has 2 bytes free of 1"},
	}
	for _, tc := range tests {
		in := good
		tc.change(&in)
		if _, err := MakePlan(in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := MakePlan(good); err != nil {
		t.Errorf("good input: %v", err)
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		total         uint64
		weights, caps []uint64
		want          []uint64
	}{
		{10, []uint64{1, 1, 1}, []uint64{10, 10, 10}, []uint64{4, 3, 3}},
		{10, []uint64{1, 3, 1}, []uint64{10, 10, 10}, []uint64{2, 6, 2}},
		{5, []uint64{3, 2}, []uint64{3, 2}, []uint64{3, 2}},
		{4, []uint64{0, 5}, []uint64{0, 5}, []uint64{0, 4}},
		{7, []uint64{0, 0}, []uint64{9, 9}, []uint64{0, 0}},
		// Large counts must not overflow total*weight.
		{1 << 40, []uint64{1 << 40, 1 << 40}, []uint64{1 << 40, 1 << 40}, []uint64{1 << 39, 1 << 39}},
	}
	for _, tc := range tests {
		if got := split(tc.total, tc.weights, tc.caps); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("split(%d, %v, %v) = %v, want %v", tc.total, tc.weights, tc.caps, got, tc.want)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.normalized()
	if o.Margin != DefaultMargin || o.Budget != DefaultBudget || o.Strategy != StrategyMovePages || o.Retries != DefaultRetries || o.FreeMemory == nil {
		t.Fatalf("defaults %+v", o)
	}
	small := Margin{MinBytes: 1}
	if got := (Options{Margin: small, Budget: time.Second}).normalized(); got.Margin != small || got.Budget != time.Second {
		t.Fatalf("explicit settings lost: %+v", got)
	}
}

package decide

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/moveplan"
	"github.com/locus-project/locus/pkg/workload"
)

// TestUndoFailedMoves: the checkpoint after a decision whose moves failed
// says what is true: a moved workload whose writes failed keeps its old
// CPUs, the workload admitted on them keeps what it had (nothing, for a
// new one), a move that completed stands, and each is a problem.
func TestUndoFailedMoves(t *testing.T) {
	as := func(cpus ...int) workload.Assignment {
		return workload.Assignment{CPUs: cpuset.New(cpus...), Policy: cpualloc.FullPCPUs}
	}
	prev := map[string]workload.Assignment{"left": as(4, 5), "right": as(6, 7), "other": as(8)}
	kept := map[string]workload.Assignment{"left": as(0, 1), "right": as(2, 3), "other": as(8), "big": as(4, 5, 6, 7)}
	moves := []Move{
		{Move: moveplan.Move{Workload: "left", From: cpuset.New(4, 5), To: cpuset.New(0, 1)}, For: "big"},
		{Move: moveplan.Move{Workload: "right", From: cpuset.New(6, 7), To: cpuset.New(2, 3)}, For: "big"},
	}
	busy := errors.New("write cpuset.cpus: device or resource busy")
	for _, tc := range []struct {
		name    string
		failed  map[string]error
		want    map[string]workload.Assignment
		reasons []string // workload/reason of the problems, in order
	}{
		{"nothing failed", nil, kept, nil},
		{"one of two moves failed", map[string]error{"left": busy},
			map[string]workload.Assignment{"left": as(4, 5), "right": as(2, 3), "other": as(8)},
			[]string{"left/MoveFailed", "big/MoveIncomplete"}},
		{"both failed", map[string]error{"left": busy, "right": busy},
			map[string]workload.Assignment{"left": as(4, 5), "right": as(6, 7), "other": as(8)},
			[]string{"left/MoveFailed", "right/MoveFailed", "big/MoveIncomplete"}},
		{"a workload not moved is not undone", map[string]error{"other": busy}, kept, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(kept)
			got, probs := UndoFailedMoves(kept, prev, moves, tc.failed)
			if !SameAssignments(got, tc.want) {
				t.Errorf("assignments %v, want %v", got, tc.want)
			}
			if !SameAssignments(kept, before) {
				t.Errorf("kept changed to %v", kept)
			}
			var reasons []string
			for _, p := range probs {
				reasons = append(reasons, p.Workload+"/"+p.Reason)
				if p.Message == "" {
					t.Errorf("%s: empty message", p.Workload)
				}
			}
			if !slices.Equal(reasons, tc.reasons) {
				t.Errorf("problems %v, want %v", reasons, tc.reasons)
			}
		})
	}
}

package decide

import (
	"fmt"
	"maps"
	"slices"

	"github.com/locus-project/locus/pkg/workload"
)

// Reasons of a move that did not complete: the moved workload's writes
// failed (it stays where it was), and the workload admitted on the CPUs it
// was to leave waits.
const (
	ReasonMoveFailed     = "MoveFailed"
	ReasonMoveIncomplete = "MoveIncomplete"
)

// UndoFailedMoves is what the checkpoint must say once the writes of the
// moved workloads named in failed did not complete: each keeps the
// assignment it had before the decision (prev), and so does each workload
// admitted on the CPUs one of them was to leave, which was not written
// (none, for one that had none). Moves that did complete stand. The
// problems say why, so that the status and a Warning tell it; the next
// reconcile plans again. kept is not changed.
func UndoFailedMoves(kept, prev map[string]workload.Assignment, moves []Move, failed map[string]error) (map[string]workload.Assignment, []workload.Problem) {
	if len(failed) == 0 {
		return kept, nil
	}
	out := maps.Clone(kept)
	restore := func(name string) {
		if a, ok := prev[name]; ok {
			out[name] = a
		} else {
			delete(out, name)
		}
	}
	var probs []workload.Problem
	waiting := map[string]string{}
	for _, m := range moves {
		err, ok := failed[m.Workload]
		if !ok {
			continue
		}
		restore(m.Workload)
		probs = append(probs, workload.Problem{Workload: m.Workload, Reason: ReasonMoveFailed,
			Message: fmt.Sprintf("stays on CPUs %s: its move to CPUs %s so that %s fits failed (%v); planned again at the next reconcile", m.From, m.To, m.For, err)})
		if _, told := waiting[m.For]; !told {
			waiting[m.For] = m.Workload
		}
	}
	for _, name := range slices.Sorted(maps.Keys(waiting)) {
		restore(name)
		probs = append(probs, workload.Problem{Workload: name, Reason: ReasonMoveIncomplete,
			Message: fmt.Sprintf("not given its CPUs yet: the move of %s off them did not complete; waits for the next reconcile", waiting[name])})
	}
	return out, probs
}

// Unmoved is m once the moves of failed did not complete: they are not
// recent moves, so the next reconcile may plan them again, their
// cpuset.mems follows nothing, and its last decision, which assumed them,
// is not reused.
func (m Memory) Unmoved(failed map[string]error) Memory {
	if len(failed) == 0 {
		return m
	}
	m.Last, m.Moved, m.Following = nil, maps.Clone(m.Moved), maps.Clone(m.Following)
	for name := range failed {
		delete(m.Moved, name)
		delete(m.Following, name)
	}
	return m
}

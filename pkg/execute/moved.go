package execute

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// ErrMoveIncomplete says a workload admitted on CPUs another was moved off
// was not written: the moved workload's own writes failed, so it may still
// run on them.
var ErrMoveIncomplete = errors.New("move incomplete")

// movesOf maps each workload a decision moved to those admitted on the CPUs
// it leaves.
func movesOf(moves []decide.Move) map[string][]string {
	if len(moves) == 0 {
		return nil
	}
	out := make(map[string][]string, len(moves))
	for _, m := range moves {
		out[m.Workload] = append(out[m.Workload], m.For)
	}
	return out
}

// applyMovedFirst writes the batches of the moved workloads (who names each
// batch's workloads, comma-separated) before the others. Batches are
// otherwise written together, and the workload admitted on the CPUs a
// moved one leaves must not be given them before it has left them: no CPU
// has two owners on the way. Between the two rounds BetweenBatches runs, as
// between any two batches. A moved workload whose writes failed may still
// run on its old CPUs, so the batches of the workloads admitted on them are
// not written (heldBack); one whose cgroup is gone has left them.
func (e *Executor) applyMovedFirst(todo []cgroup.Batch, who []string, res *Report) []cgroup.BatchReport {
	var first, rest []int
	for i := range todo {
		moved := false
		for _, name := range strings.Split(who[i], ",") {
			_, ok := e.moved[name]
			moved = moved || ok
		}
		if moved {
			first = append(first, i)
		} else {
			rest = append(rest, i)
		}
	}
	if len(first) == 0 || len(rest) == 0 {
		return e.w.ApplyBatches(todo)
	}
	out := make([]cgroup.BatchReport, len(todo))
	held := map[string]error{}
	for round, idx := range [][]int{first, rest} {
		if round > 0 && e.c.BetweenBatches != nil {
			e.c.BetweenBatches()
		}
		var bs []cgroup.Batch
		var at []int
		for _, i := range idx {
			if err := heldBack(who[i], held); err != nil {
				out[i] = cgroup.BatchReport{Err: err}
				continue
			}
			bs, at = append(bs, todo[i]), append(at, i)
		}
		for k, rep := range e.w.ApplyBatches(bs) {
			out[at[k]] = rep
		}
		if round == 0 {
			held = e.failedMoves(idx, who, out, res)
		}
	}
	return out
}

// failedMoves records in res the moves whose writes failed (among the
// batches idx of who) and returns, by admitted workload, why it waits.
func (e *Executor) failedMoves(idx []int, who []string, reps []cgroup.BatchReport, res *Report) map[string]error {
	held := map[string]error{}
	for _, i := range idx {
		err := reps[i].Err
		if err == nil || errors.Is(err, cgroup.ErrCgroupGone) {
			continue
		}
		for _, name := range strings.Split(who[i], ",") {
			admitted, ok := e.moved[name]
			if !ok {
				continue
			}
			if res.movesFailed == nil {
				res.movesFailed = map[string]error{}
			}
			res.movesFailed[name] = err
			for _, a := range admitted {
				if held[a] == nil {
					held[a] = fmt.Errorf("%w: the move of %s off its CPUs failed (%v); waits for the next reconcile", ErrMoveIncomplete, name, err)
				}
			}
		}
	}
	return held
}

// heldBack is why the batch of the workloads who is not written, or nil.
func heldBack(who string, held map[string]error) error {
	for _, name := range strings.Split(who, ",") {
		if err := held[name]; err != nil {
			return err
		}
	}
	return nil
}

// FailedMoves are the workloads the decision moved whose writes failed, by
// name, with why: they may still run on the CPUs they were to leave.
func (r Report) FailedMoves() map[string]error { return maps.Clone(r.movesFailed) }

// MoveProblems say, of the moves that failed, why the moved workload stays
// and the admitted one waits (decide.UndoFailedMoves).
func (r Report) MoveProblems() []workload.Problem { return r.moveProblems }

// undoFailedMoves has the checkpoint say what is true after moves failed:
// the moved workloads and those admitted on their CPUs keep the assignments
// they had before the decision (prev), and the next reconcile plans again.
func (e *Executor) undoFailedMoves(moves []decide.Move, prev map[string]workload.Assignment, res *Report) {
	if len(res.movesFailed) == 0 || e.c.DryRun {
		return
	}
	err := e.c.Store.Update(func(c *state.Checkpoint) error {
		c.Assignments, res.moveProblems = decide.UndoFailedMoves(c.Assignments, prev, moves, res.movesFailed)
		for name := range res.movesFailed {
			delete(c.MemsFollowing, name) // it stays where it was: nothing follows
		}
		return nil
	})
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("undo the failed moves in the checkpoint: %w", err))
	}
}

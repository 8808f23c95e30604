package execute

import (
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
)

// movedNames are the workloads a decision moved so that another fits.
func movedNames(moves []decide.Move) map[string]bool {
	if len(moves) == 0 {
		return nil
	}
	out := make(map[string]bool, len(moves))
	for _, m := range moves {
		out[m.Workload] = true
	}
	return out
}

// applyMovedFirst writes the batches of the moved workloads (who names each
// batch's workloads, comma-separated) before the others. Batches are
// otherwise written together, and the workload admitted on the CPUs a
// moved one leaves must not be given them before it has left them: no CPU
// has two owners on the way. Between the two rounds BetweenBatches runs, as
// between any two batches.
func (e *Executor) applyMovedFirst(todo []cgroup.Batch, who []string) []cgroup.BatchReport {
	var first, rest []int
	for i := range todo {
		moved := false
		for _, name := range strings.Split(who[i], ",") {
			moved = moved || e.moved[name]
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
	for round, idx := range [][]int{first, rest} {
		if round > 0 && e.c.BetweenBatches != nil {
			e.c.BetweenBatches()
		}
		bs := make([]cgroup.Batch, len(idx))
		for k, i := range idx {
			bs[k] = todo[i]
		}
		for k, rep := range e.w.ApplyBatches(bs) {
			out[idx[k]] = rep
		}
	}
	return out
}

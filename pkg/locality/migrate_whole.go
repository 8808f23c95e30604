//go:build linux

package locality

import (
	"context"
	"maps"
	"os"
	"slices"
	"time"
)

// migrateWhole moves a process with migrate_pages(2): one call per target
// node moves every page on the source nodes. It is fast but one call can
// stall the process for as long as the whole move takes, it cannot split a
// source node over several targets, stop at a margin or spare mappings a
// memory policy holds, and as root it also moves pages shared with other
// processes. When the plan needs any of that, the process is moved with
// move_pages instead and Note says why.
func migrateWhole(ctx context.Context, pp ProcessPlan, plan Plan, opts Options, ctl *BatchController) ProcessResult {
	fallback := func(why string) ProcessResult {
		pr := moveProcess(ctx, pp, plan, opts, ctl)
		pr.Note = "moved with move_pages: " + why
		return pr
	}
	if why := wholeRefused(pp, plan); why != "" {
		return fallback(why)
	}
	toOf := targetOf(pp)
	res := ProcessResult{PID: pp.PID, Strategy: StrategyMigratePages}
	fail := func(err error) ProcessResult {
		res.Err = processError(opts.ProcRoot, pp.PID, err)
		return res
	}
	need := map[int]uint64{}
	for _, mv := range pp.Moves {
		need[mv.To] += mv.Pages
	}
	targets := slices.Sorted(maps.Keys(need))
	mem, err := opts.FreeMemory(targets)
	if err != nil {
		return fail(err)
	}
	pageSize := uint64(os.Getpagesize())
	for _, t := range targets {
		nm := mem[t]
		if margin := opts.Margin.For(nm.Total); nm.Free < margin || (nm.Free-margin)/pageSize < need[t] {
			return fallback("free memory fell since the plan")
		}
	}
	reader := Reader{ProcRoot: opts.ProcRoot}
	before, err := reader.Process(pp.PID)
	if err != nil {
		return fail(err)
	}
	for _, t := range targets {
		var froms []int
		for from, to := range toOf {
			if to == t {
				froms = append(froms, from)
			}
		}
		slices.Sort(froms)
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		start := time.Now()
		left, err := migratePages(pp.PID, froms, []int{t})
		took := time.Since(start)
		res.addCall(took, took) // the mmap lock is held throughout: see finishWhole
		if err != nil {
			return fail(err)
		}
		res.Busy += uint64(left)
	}
	after, err := reader.Process(pp.PID)
	if err != nil {
		return fail(err)
	}
	for _, from := range slices.Sorted(maps.Keys(toOf)) {
		if b, a := before.Pages[from], after.Pages[from]; b > a {
			res.Moved = append(res.Moved, Move{From: from, To: toOf[from], Pages: b - a})
		}
	}
	return res
}

// wholeRefused says why migrate_pages(2) cannot carry out a process's part of
// the plan, or "" when it can: it moves every page of a source node to one
// target, all at once, whatever a memory policy says.
func wholeRefused(pp ProcessPlan, plan Plan) string {
	toOf := map[int]int{}
	for _, mv := range pp.Moves {
		if t, seen := toOf[mv.From]; seen && t != mv.To {
			return "a remote node's pages are split over several local nodes"
		}
		toOf[mv.From] = mv.To
	}
	switch {
	case len(plan.Stopped) > 0:
		return "the free-memory margin allows only part of the move"
	case pp.Held > 0:
		return "a memory policy holds some remote pages in place"
	}
	return ""
}

// targetOf maps each source node of the process's moves to its target.
func targetOf(pp ProcessPlan) map[int]int {
	toOf := map[int]int{}
	for _, mv := range pp.Moves {
		toOf[mv.From] = mv.To
	}
	return toOf
}

package cgroup

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// Batch is one set of files written together: Ops brought to their values
// and Restores given back their recorded originals, ordered as one (see
// Apply). A batch stops at its first failed write.
type Batch struct {
	Ops      []Op
	Restores []Target
}

// BatchReport is what became of one Batch: results for its ops, then its
// restores, the writes made, and the error that stopped it, if any.
type BatchReport struct {
	Report
	Err error
}

// ApplyBatches applies independent batches, so that one broken cgroup does
// not hold back the others, at the cost of one originals update: every batch
// is validated, read and planned first; the originals of every file any of
// them is about to change are recorded in one durable store update; then the
// batches are written, a few at a time (one at a time with BetweenBatches),
// each stopping only itself on a failed write; finally the restored originals
// are forgotten in one update.
//
// Because every batch is read before any is written, batches must not share
// a cgroup, nor hold a cgroup and one of its ancestors: a batch that does is
// refused, with the one it clashes with. A batch that fails because one of
// its cgroups was removed meanwhile fails with a GoneError (ErrCgroupGone).
// Files already right are not written, so a call with nothing to do writes
// nothing, the store included.
func (w *Writer) ApplyBatches(bs []Batch) []BatchReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.h.Scope()()
	out := make([]BatchReport, len(bs))
	plans := make([]*batchPlan, len(bs))
	clashes := apart(bs)
	rd := newReads(w.h)
	originals := map[string]string{}
	// Reading and planning touch nothing, and batches are apart: they run
	// in parallel, which matters with hundreds of batches of files to read.
	parallel(len(bs), func(i int) {
		if err := clashes[i]; err != nil {
			out[i].Err = err
			return
		}
		p, rep, err := w.prepare(bs[i], rd)
		out[i].Report, out[i].Err = rep, w.goneOf(bs[i], err)
		if err == nil {
			plans[i] = p
		}
	})
	for _, p := range plans {
		if p == nil {
			continue
		}
		for it := range p.last {
			originals[it.key] = it.orig
		}
		for _, it := range p.defaults {
			originals[it.key] = it.orig
		}
		for k, v := range p.reset {
			if _, ok := originals[k]; !ok {
				originals[k] = v
			}
		}
	}
	if w.DryRun {
		for i, p := range plans {
			for _, s := range planSteps(p) {
				out[i].Writes = append(out[i].Writes, FileWrite{s.it.path, s.value})
			}
		}
		return out
	}
	if len(originals) > 0 {
		if err := w.store.RecordOriginals(originals); err != nil {
			for i, p := range plans {
				if p == nil || len(p.last) == 0 {
					continue // nothing to write, nothing lost
				}
				for it := range p.last {
					out[i].Results[it.idx].Outcome = NotRun
				}
				out[i].Err = err
			}
			return out
		}
	}
	commit := func(i int) {
		if p := plans[i]; p != nil {
			if err := w.commit(p, &out[i].Report); err != nil {
				out[i].Err = w.goneOf(bs[i], err)
				if errors.Is(out[i].Err, ErrCgroupGone) {
					markGone(&out[i].Report)
				}
			}
		}
	}
	if w.BetweenBatches == nil {
		parallel(len(bs), commit) // batches are apart: their writes do not interact
	} else {
		wrote := false
		for i, p := range plans {
			if p == nil || len(p.steps) == 0 {
				continue
			}
			if wrote {
				w.BetweenBatches()
			}
			wrote = true
			commit(i)
		}
	}
	var forget []string
	var restored []int
	for i, p := range plans {
		if p != nil && out[i].Err == nil && len(p.forget) > 0 {
			forget, restored = append(forget, p.forget...), append(restored, i)
		}
	}
	if len(forget) > 0 {
		if err := w.store.Forget(forget...); err != nil {
			for _, i := range restored {
				out[i].Err = err
			}
		}
	}
	return out
}

// maxWorkers bounds the goroutines of one call: cgroup reads and writes are
// short system calls, and a few threads already keep the CPUs busy.
const maxWorkers = 4

// parallel runs f(0) … f(n-1) on up to maxWorkers goroutines (fewer with
// fewer CPUs) and returns when all are done.
func parallel(n int, f func(i int)) {
	workers := min(n, maxWorkers, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

func planSteps(p *batchPlan) []step {
	if p == nil {
		return nil
	}
	return p.steps
}

// apart finds batches that share a cgroup or hold a cgroup and an ancestor
// of it, and returns an error for each of them.
func apart(bs []Batch) map[int]error {
	owner := map[string]int{}
	bad := map[int]error{}
	clash := func(i, j int, a, b string) {
		err := fmt.Errorf("cgroups %q and %q are in different batches but one contains the other; "+
			"write them in one batch, since every batch is read before any is written", a, b)
		if a == b {
			err = fmt.Errorf("cgroup %q is in two batches; write it in one", a)
		}
		for _, k := range []int{i, j} {
			if bad[k] == nil {
				bad[k] = err
			}
		}
	}
	claim := func(i int, cg string) {
		if j, ok := owner[cg]; ok && j != i {
			clash(j, i, cg, cg)
		} else if !ok {
			owner[cg] = i
		}
	}
	for i, b := range bs {
		for _, op := range b.Ops {
			claim(i, op.Cgroup)
		}
		for _, t := range b.Restores {
			claim(i, t.Cgroup)
		}
	}
	cgs := make([]string, 0, len(owner))
	for cg := range owner {
		cgs = append(cgs, cg)
	}
	sort.Strings(cgs)
	for _, cg := range cgs {
		i := owner[cg]
		for a, ok := parentRel(cg); ok; a, ok = parentRel(a) {
			if j, held := owner[a]; held && j != i {
				clash(j, i, a, cg)
			}
		}
	}
	return bad
}

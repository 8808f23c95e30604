package execute

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
)

// batch is the writes of cgroups that form one subtree: workloads whose
// cgroups nest must be written together (the writer orders parents and
// children), while unrelated ones are written apart so that one broken
// cgroup does not hold back the others.
type batch struct {
	cgroups  []string
	ops      []cgroup.Op
	restores []cgroup.Target
}

// related is true when one cgroup is the other or an ancestor of it.
func related(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

// batches groups ops and restores into independent subtrees, in a stable
// order (by first cgroup) so that runs are reproducible. A cgroup joins the
// group of its nearest ancestor that has writes too.
func batches(ops []cgroup.Op, restores []cgroup.Target) []batch {
	index := map[string]int{}
	var cgs []string
	add := func(cg string) {
		if _, ok := index[cg]; !ok {
			index[cg] = len(cgs)
			cgs = append(cgs, cg)
		}
	}
	for _, op := range ops {
		add(op.Cgroup)
	}
	for _, t := range restores {
		add(t.Cgroup)
	}
	sort.Strings(cgs)
	for i, cg := range cgs {
		index[cg] = i
	}
	// Sorted, an ancestor comes before its descendants, so its group is
	// known when they are reached.
	group := make([]int, len(cgs))
	var out []batch
	for i, cg := range cgs {
		group[i] = -1
		for p := path.Dir(cg); p != "." && p != "/"; p = path.Dir(p) {
			if j, ok := index[p]; ok {
				group[i] = group[j]
				break
			}
		}
		if group[i] < 0 {
			group[i] = len(out)
			out = append(out, batch{})
		}
		out[group[i]].cgroups = append(out[group[i]].cgroups, cg)
	}
	// Each batch's ops and restores are a part of one array sized once:
	// grown by appends, batch by batch, they were 3 % of the bytes the
	// agent allocated under a 300-pod churn.
	nops, nrestores := make([]int, len(out)), make([]int, len(out))
	for _, op := range ops {
		nops[group[index[op.Cgroup]]]++
	}
	for _, t := range restores {
		nrestores[group[index[t.Cgroup]]]++
	}
	allOps, allRestores := make([]cgroup.Op, 0, len(ops)), make([]cgroup.Target, 0, len(restores))
	for g := range out {
		out[g].ops, allOps = allOps[:0:nops[g]], allOps[nops[g]:nops[g]:cap(allOps)]
		out[g].restores, allRestores = allRestores[:0:nrestores[g]], allRestores[nrestores[g]:nrestores[g]:cap(allRestores)]
	}
	for _, op := range ops {
		g := group[index[op.Cgroup]]
		out[g].ops = append(out[g].ops, op)
	}
	for _, t := range restores {
		g := group[index[t.Cgroup]]
		out[g].restores = append(out[g].restores, t)
	}
	return out
}

// placement is where the knob's file lies on this hierarchy's version (nil:
// the version has none), and whether the knob is known at all.
func (e *Executor) placement(k cgroup.Knob) (*cgroup.Placement, bool) {
	spec, ok := cgroup.Lookup(k)
	if !ok {
		return nil, false
	}
	return spec.Placement(e.c.Hierarchy.Version()), true
}

// hasOriginal says whether an original value of the knob is recorded, so
// a restore has something to write back.
func (e *Executor) hasOriginal(rel string, k cgroup.Knob) bool {
	pl, _ := e.placement(k)
	if pl == nil {
		return false
	}
	return cgroup.HasOriginal(e.c.Originals, *pl, rel)
}

// ReadBack is the text of files as a reconcile left them, per cgroup and
// knob, where it is known without reading them again: files read and left
// alone, and files written whose text the kernel keeps verbatim. A knob
// whose file the kernel lacks maps to absent.
type ReadBack map[string]map[cgroup.Knob]FileState

// FileState is a file's text, or its absence.
type FileState struct {
	Text    string
	Present bool
}

// writeBatches applies the batches through one call of the writer: the
// originals of every file about to change are recorded in one update, then
// each batch is written on its own, so a failed one does not stop the others.
// It returns what it knows the files hold afterwards.
func (e *Executor) writeBatches(bs []batch, owner map[string]string, marks map[cgroup.Target]poolMark, res *Report) ReadBack {
	// Keyed by a struct, not a joined string: a string built per op was
	// 4 % of the bytes the agent allocated under a 300-pod churn.
	present := map[dirKey]bool{}
	has := func(rel string, k cgroup.Knob) bool {
		pl, known := e.placement(k)
		if !known {
			return false
		}
		if pl == nil {
			return true // the writer reports it as unsupported
		}
		key := dirKey{rel, pl.Controller}
		ok, known := present[key]
		if !known {
			ok = e.c.Hierarchy.ExistsInScope(pl.Controller, rel)
			present[key] = ok
		}
		return ok
	}
	var todo []cgroup.Batch
	var who []string
	for _, b := range bs {
		// Filtered in place: a batch's ops and restores are its own part of
		// the arrays batches made, and copying them again was as many bytes.
		cb := cgroup.Batch{Ops: b.ops[:0], Restores: b.restores[:0]}
		for _, op := range b.ops {
			if has(op.Cgroup, op.Knob) {
				cb.Ops = append(cb.Ops, op)
			}
		}
		for _, t := range b.restores {
			if has(t.Cgroup, t.Knob) && e.hasOriginal(t.Cgroup, t.Knob) {
				cb.Restores = append(cb.Restores, t)
				res.restored = append(res.restored, t)
			}
		}
		if len(cb.Ops)+len(cb.Restores) > 0 {
			todo, who = append(todo, cb), append(who, workloadsOf(b.cgroups, owner))
		}
	}
	seen := ReadBack{}
	reps := e.applyMovedFirst(todo, who, res)
	only, moves := e.poolOnly(reps, owner, marks), poolMoves{}
	for i, rep := range reps {
		e.account(rep.Report, owner, only, marks, moves, res)
		if rep.Err != nil {
			e.writeFailed(who[i], rep.Err, res)
			for _, name := range strings.Split(who[i], ",") {
				if res.failed == nil {
					res.failed = map[string]bool{}
				}
				res.failed[name] = true
			}
		}
		for _, r := range rep.Results {
			if r.Outcome == cgroup.Written {
				res.written = append(res.written, cgroup.Target{Cgroup: r.Cgroup, Knob: r.Knob})
			}
			var f FileState
			switch spec, _ := cgroup.Lookup(r.Knob); {
			case r.Outcome == cgroup.Unchanged || r.Outcome == cgroup.NoOriginal: // After is the text read
				f = FileState{r.After, true}
			case r.Outcome == cgroup.Written && spec.Verbatim():
				f = FileState{r.After, true}
			case r.Outcome == cgroup.Unsupported:
			default:
				// Other written files are read again: the kernel may store
				// the value rounded (memory in pages). Failed ones are unknown.
				continue
			}
			if seen[r.Cgroup] == nil {
				seen[r.Cgroup] = map[cgroup.Knob]FileState{}
			}
			seen[r.Cgroup][r.Knob] = f
		}
	}
	e.emitPoolMoves(moves, marks)
	return seen
}

func (e *Executor) writeFailed(who string, err error, res *Report) {
	if errors.Is(err, ErrMoveIncomplete) {
		// Not a write that failed: the agent tells it as the workload's
		// problem (decide.UndoFailedMoves).
		res.Errors = append(res.Errors, fmt.Errorf("%s: %w", who, err))
		return
	}
	if errors.Is(err, cgroup.ErrCgroupGone) {
		// Removed by its owner (a pod going away) between the reconcile's
		// look and its write: nothing failed, and the next reconcile no
		// longer sees it.
		e.c.Log.Debug("cgroup removed while written", "workload", who, "err", err)
		return
	}
	res.Errors = append(res.Errors, fmt.Errorf("%s: %w", who, err))
	e.c.Events.Emit(eventlog.Warning, "CgroupWriteFailed", who, "%v", err)
}

// account counts writes, reports unsupported knobs once per node and says
// which files changed, per workload; the writes of workloads that only
// followed their pool (poolOnly) go to moves, told once per pool.
func (e *Executor) account(rep cgroup.Report, owner map[string]string, poolOnly map[string]bool, marks map[cgroup.Target]poolMark, moves poolMoves, res *Report) {
	if e.c.DryRun {
		for _, w := range rep.Writes {
			fmt.Fprintf(e.c.Out, "write %s = %s\n", w.Path, w.Value)
		}
		res.Planned = append(res.Planned, rep.Writes...)
		return
	}
	res.Writes += len(rep.Writes)
	e.c.Writes.Add(float64(len(rep.Writes)))
	for _, r := range e.unsupported.Fresh(rep.Results) {
		e.unsupportedKnobs = append(e.unsupportedKnobs, string(r.Knob))
		e.c.Unsupported.WithLabelValues(string(r.Knob)).Set(1)
		why := r.Reason
		if _, after, ok := strings.Cut(why, ": "); ok {
			why = after // the reason starts with the file name, said already
		}
		why = upstreamWhy(e.c.Hierarchy.Version(), r.Knob, why)
		e.c.Events.Emit(eventlog.Warning, "KnobUnsupported", "", "%s is not supported by this kernel (%s); Locus skips it on this node", r.Knob, why)
	}
	changed := map[string][]string{}
	for _, r := range rep.Results {
		if r.Outcome == cgroup.Written {
			name := owner[r.Cgroup]
			if poolOnly[name] {
				moves.add(marks[cgroup.Target{Cgroup: r.Cgroup, Knob: r.Knob}].pool, name, r)
				continue
			}
			changed[name] = append(changed[name], e.containerPrefix(r.Cgroup)+fmt.Sprintf("%s=%s", r.Knob, r.After))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(changed)) {
		e.c.Events.Emit(eventlog.Normal, "CgroupUpdated", name, "%s", strings.Join(changed[name], " "))
	}
}

func workloadsOf(cgs []string, owner map[string]string) string {
	var names []string
	seen := map[string]bool{}
	for _, cg := range cgs {
		if n := owner[cg]; n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// upstreamWhy explains a missing file that upstream kernels have on cgroup
// v2 but never on v1 (memory.min, memory.low, memory.high): on a v1 host its
// absence is the upstream norm, not a missing vendor extension.
func upstreamWhy(v cgroup.Version, k cgroup.Knob, why string) string {
	spec, ok := cgroup.Lookup(k)
	if !ok || v != cgroup.V1 || spec.V1 == nil || !spec.V1.Extension || spec.V2 == nil || spec.V2.Extension {
		return why
	}
	return fmt.Sprintf("upstream cgroup v1 has no %s file, cgroup v2 has it; on v1 only Alibaba Cloud Linux and Anolis kernels add it", k)
}

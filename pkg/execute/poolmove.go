package execute

import (
	"maps"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
)

// A shared pool's CPUs change whenever a workload is given CPUs of its own
// or gives them back, and every workload on the pool then has its cpuset
// rewritten: hundreds of files for one change. Those writes are told once,
// on the node (SharedPoolChanged), rather than once per workload
// (CgroupUpdated). A file counts as moved with its pool when the decision
// marks its value as the pool's (cgroup.Op.Pool) and the file held, just
// before, the text the last Apply left it with as the same pool's: a
// workload joining the pool, leaving its own CPUs for it, or a file someone
// else changed are the workload's own news, and a workload with any such
// file, or any other file written, keeps its CgroupUpdated with all of them.

// pooledFile is what a file held after the last Apply, as a pool's value.
type pooledFile struct{ pool, text string }

// poolMark is the pool a decided value is, and the value.
type poolMark struct{ pool, value string }

// poolMarks are the ops' pool marks, by file.
func poolMarks(ops []cgroup.Op) map[cgroup.Target]poolMark {
	marks := map[cgroup.Target]poolMark{}
	for _, op := range ops {
		if op.Pool != "" {
			marks[cgroup.Target{Cgroup: op.Cgroup, Knob: op.Knob}] = poolMark{op.Pool, op.Value}
		}
	}
	return marks
}

// movedWithPool says whether a written file only followed its pool.
func (e *Executor) movedWithPool(r cgroup.Result, marks map[cgroup.Target]poolMark) bool {
	t := cgroup.Target{Cgroup: r.Cgroup, Knob: r.Knob}
	m, ok := marks[t]
	if !ok {
		return false
	}
	prev, ok := e.pooled[t]
	return ok && prev.pool == m.pool && prev.text == r.Before
}

// poolOnly are the workloads whose written files, over every batch of an
// Apply, all only followed their pool.
func (e *Executor) poolOnly(reps []cgroup.BatchReport, owner map[string]string, marks map[cgroup.Target]poolMark) map[string]bool {
	only := map[string]bool{}
	for _, rep := range reps {
		for _, r := range rep.Results {
			if r.Outcome != cgroup.Written {
				continue
			}
			name := owner[r.Cgroup]
			if moved, seen := only[name]; !seen || moved {
				only[name] = e.movedWithPool(r, marks)
			}
		}
	}
	return only
}

// poolMoves gathers the files written only because their pool moved, per
// pool, for one event each.
type poolMoves map[string]*poolMove

type poolMove struct {
	knobs     map[cgroup.Knob]bool
	cgroups   map[string]bool
	workloads map[string]bool
}

func (m poolMoves) add(pool, workload string, r cgroup.Result) {
	pm := m[pool]
	if pm == nil {
		pm = &poolMove{knobs: map[cgroup.Knob]bool{}, cgroups: map[string]bool{}, workloads: map[string]bool{}}
		m[pool] = pm
	}
	pm.knobs[r.Knob], pm.cgroups[r.Cgroup], pm.workloads[workload] = true, true, true
}

// emitPoolMoves tells each pool's move once, on the node: its CPUs and
// mems now, the files rewritten and in how many cgroups of how many
// workloads.
func (e *Executor) emitPoolMoves(moves poolMoves, marks map[cgroup.Target]poolMark) {
	if len(moves) == 0 {
		return
	}
	now := map[string]map[cgroup.Knob]string{} // pool to knob to value
	for t, m := range marks {
		if now[m.pool] == nil {
			now[m.pool] = map[cgroup.Knob]string{}
		}
		now[m.pool][t.Knob] = m.value
	}
	what := "cgroups"
	if e.c.Pods {
		what = "containers"
	}
	for _, pool := range slices.Sorted(maps.Keys(moves)) {
		pm := moves[pool]
		var knobs []string
		for _, k := range slices.Sorted(maps.Keys(pm.knobs)) {
			knobs = append(knobs, string(k))
		}
		is := "CPUs " + now[pool][cgroup.CPUSetCPUs]
		if mems := now[pool][cgroup.CPUSetMems]; mems != "" { // none where the kubelet binds every pod's memory
			is += ", mems " + mems
		}
		e.c.Events.Emit(eventlog.Normal, "SharedPoolChanged", "", "%s pool now %s: %s rewritten in %d %s of %d workloads",
			pool, is, strings.Join(knobs, ", "), len(pm.cgroups), what, len(pm.workloads))
	}
}

// rememberPooled keeps, for every file the decision marks as a pool's
// (marks), what it holds after this Apply where that is known (seen); the
// others are forgotten.
func (e *Executor) rememberPooled(marks map[cgroup.Target]poolMark, seen ReadBack) {
	next := make(map[cgroup.Target]pooledFile, len(marks))
	for t, m := range marks {
		if f, ok := e.held(seen, e.applies, t.Cgroup, t.Knob); ok && f.Present {
			next[t] = pooledFile{m.pool, f.Text}
		}
	}
	e.pooled = next
}

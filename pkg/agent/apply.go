package agent

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
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
// order (by first cgroup) so that runs are reproducible.
func batches(ops []cgroup.Op, restores []cgroup.Target) []batch {
	var cgs []string
	seen := map[string]bool{}
	add := func(cg string) {
		if !seen[cg] {
			seen[cg] = true
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
	// Union-find over the (few) cgroups; pairwise is fine at this size.
	parent := make([]int, len(cgs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for i := range cgs {
		for j := i + 1; j < len(cgs); j++ {
			if related(cgs[i], cgs[j]) {
				parent[find(j)] = find(i)
			}
		}
	}
	index := map[string]int{}
	var out []batch
	group := map[int]int{}
	for i, cg := range cgs {
		root := find(i)
		g, ok := group[root]
		if !ok {
			g = len(out)
			group[root] = g
			out = append(out, batch{})
		}
		out[g].cgroups = append(out[g].cgroups, cg)
		index[cg] = g
	}
	for _, op := range ops {
		out[index[op.Cgroup]].ops = append(out[index[op.Cgroup]].ops, op)
	}
	for _, t := range restores {
		out[index[t.Cgroup]].restores = append(out[index[t.Cgroup]].restores, t)
	}
	return out
}

// knobPresent says whether the directory holding a knob's file exists for
// this cgroup. Knobs the version lacks count as present: the writer reports
// them as unsupported.
func (a *Agent) knobPresent(rel string, k cgroup.Knob) bool {
	spec, ok := cgroup.Lookup(k)
	if !ok {
		return false
	}
	pl := spec.Placement(a.h.Version())
	return pl == nil || a.h.Exists(pl.Controller, rel)
}

// hasOriginal says whether an original value of the knob is recorded, so
// a restore has something to write back.
func (a *Agent) hasOriginal(rel string, k cgroup.Knob) bool {
	spec, ok := cgroup.Lookup(k)
	if !ok {
		return false
	}
	pl := spec.Placement(a.h.Version())
	if pl == nil {
		return false
	}
	_, ok = a.originals.Original(filepath.ToSlash(filepath.Join(string(pl.Controller), rel, pl.File)))
	return ok
}

// writeBatches applies each batch and returns the errors of those that
// failed; the others are written regardless.
func (a *Agent) writeBatches(bs []batch, owner map[string]string, res *Result) {
	for i, b := range bs {
		if i > 0 {
			a.debugDelay()
		}
		var ops []cgroup.Op
		for _, op := range b.ops {
			if a.knobPresent(op.Cgroup, op.Knob) {
				ops = append(ops, op)
			}
		}
		var restores []cgroup.Target
		for _, t := range b.restores {
			if a.knobPresent(t.Cgroup, t.Knob) && a.hasOriginal(t.Cgroup, t.Knob) {
				restores = append(restores, t)
			}
		}
		who := workloadsOf(b.cgroups, owner)
		if len(ops) > 0 {
			rep, err := a.w.Apply(ops)
			a.account(rep, owner, res)
			if err != nil {
				a.writeFailed(who, err, res)
				continue
			}
		}
		if len(restores) > 0 {
			rep, err := a.w.Restore(restores)
			a.account(rep, owner, res)
			if err != nil {
				a.writeFailed(who, err, res)
			}
		}
	}
}

func (a *Agent) writeFailed(who string, err error, res *Result) {
	res.Errors = append(res.Errors, fmt.Errorf("%s: %w", who, err))
	a.events.Emit(Warning, "CgroupWriteFailed", who, "%v", err)
}

// account counts writes, reports unsupported knobs once per node and says
// which files changed, per workload.
func (a *Agent) account(rep cgroup.Report, owner map[string]string, res *Result) {
	if a.opts.DryRun {
		for _, w := range rep.Writes {
			fmt.Fprintf(a.opts.Out, "write %s = %s\n", w.Path, w.Value)
		}
		res.Planned = append(res.Planned, rep.Writes...)
		return
	}
	res.Writes += len(rep.Writes)
	a.metrics.writes.Add(float64(len(rep.Writes)))
	for _, r := range a.unsupported.Fresh(rep.Results) {
		a.unsupportedKnobs = append(a.unsupportedKnobs, string(r.Knob))
		a.metrics.unsupported.WithLabelValues(string(r.Knob)).Set(1)
		why := r.Reason
		if _, after, ok := strings.Cut(why, ": "); ok {
			why = after // the reason starts with the file name, said already
		}
		a.events.Emit(Warning, "KnobUnsupported", "", "%s is not supported by this kernel (%s); Locus skips it on this node", r.Knob, why)
	}
	changed := map[string][]string{}
	for _, r := range rep.Results {
		if r.Outcome == cgroup.Written {
			name := owner[r.Cgroup]
			changed[name] = append(changed[name], fmt.Sprintf("%s=%s", r.Knob, r.After))
		}
	}
	for _, name := range sortedKeys(changed) {
		a.events.Emit(Normal, "CgroupUpdated", name, "%s", strings.Join(changed[name], " "))
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

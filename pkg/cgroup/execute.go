package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// item is one resolved Op or Target: its file, current text and wanted text.
type item struct {
	idx  int // index in the caller's batch
	rel  string
	spec *Spec
	pl   *Placement
	path string
	key  string
	cur  string
	want string
}

type step struct {
	it    *item
	value string
}

// resolveAll checks every target, reads its file and fills the report's
// results; targets the kernel or version lacks become Unsupported results and
// no item. A duplicate target is an error: the batch would contradict itself.
func (w *Writer) resolveAll(targets []Target) ([]*item, Report, error) {
	rep := Report{Results: make([]Result, len(targets))}
	seen := map[Target]bool{}
	var items []*item
	for i, t := range targets {
		if seen[t] {
			return nil, rep, fmt.Errorf("cgroup %q: %s appears twice in one batch", t.Cgroup, t.Knob)
		}
		seen[t] = true
		rep.Results[i] = Result{Cgroup: t.Cgroup, Knob: t.Knob}
		it, reason, err := w.resolve(t)
		if err != nil {
			return nil, rep, err
		}
		if it == nil {
			rep.Results[i].Outcome, rep.Results[i].Reason = Unsupported, reason
			continue
		}
		it.idx = i
		rep.Results[i].Path, rep.Results[i].Before = it.path, it.cur
		items = append(items, it)
	}
	return items, rep, nil
}

// resolve returns the item for t, or nil and a reason when the file does not
// exist by design (no such file on this version, or a kernel extension the
// kernel lacks). A missing cgroup, or a missing upstream file, is an error.
func (w *Writer) resolve(t Target) (*item, string, error) {
	spec, _ := Lookup(t.Knob)
	if err := CheckRel(t.Cgroup); err != nil {
		return nil, "", err
	}
	if t.Cgroup == "" {
		return nil, "", fmt.Errorf("%s: refusing to write the root cgroup", t.Knob)
	}
	pl := spec.Placement(w.h.version)
	if pl == nil {
		return nil, fmt.Sprintf("cgroup %s has no %s file", w.h.version, t.Knob), nil
	}
	dir, err := w.h.Dir(pl.Controller, t.Cgroup)
	if err != nil {
		return nil, "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, "", fmt.Errorf("cgroup %q does not exist at %s", t.Cgroup, dir)
	}
	path, err := w.h.file(pl.Controller, t.Cgroup, pl.File)
	if err != nil {
		return nil, "", err
	}
	cur, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if pl.Extension {
			return nil, fmt.Sprintf("%s is absent: the kernel lacks this Alibaba Cloud Linux/Anolis extension", pl.File), nil
		}
		return nil, "", fmt.Errorf("%s is missing (is the controller enabled for cgroup %q?)", path, t.Cgroup)
	}
	if err != nil {
		return nil, "", err
	}
	return &item{rel: t.Cgroup, spec: spec, pl: pl, path: path, key: w.h.key(path), cur: cur}, "", nil
}

// execute plans the items, records originals and writes.
func (w *Writer) execute(items []*item, rep Report) (Report, error) {
	steps, err := w.plan(items)
	if err != nil {
		return rep, err
	}
	last := map[*item]string{}
	for _, s := range steps {
		last[s.it] = s.value
	}
	for _, it := range items {
		r := &rep.Results[it.idx]
		if v, ok := last[it]; ok {
			r.Outcome, r.After = Planned, v
		} else {
			r.Outcome, r.After = Unchanged, it.cur
		}
	}
	if w.DryRun {
		for _, s := range steps {
			rep.Writes = append(rep.Writes, FileWrite{s.it.path, s.value})
		}
		return rep, nil
	}
	originals := map[string]string{}
	for it := range last {
		originals[it.key] = it.cur
	}
	if len(originals) > 0 {
		if err := w.store.RecordOriginals(originals); err != nil {
			for it := range last {
				rep.Results[it.idx].Outcome = NotRun
			}
			return rep, err
		}
	}
	for i, s := range steps {
		if err := w.write(s.it.path, s.value); err != nil {
			rep.Results[s.it.idx].Outcome = Failed
			for _, rest := range steps[i+1:] {
				if rep.Results[rest.it.idx].Outcome == Planned {
					rep.Results[rest.it.idx].Outcome = NotRun
				}
			}
			return rep, err
		}
		rep.Writes = append(rep.Writes, FileWrite{s.it.path, s.value})
		if last[s.it] == s.value && rep.Results[s.it.idx].Outcome == Planned {
			rep.Results[s.it.idx].Outcome = Written
		}
	}
	return rep, nil
}

// plan orders the writes: tree-ordered knobs first (cpusets, then memory
// protections), each through PlanTree, then the rest in batch order.
func (w *Writer) plan(items []*item) ([]step, error) {
	byKnob := map[Knob][]*item{}
	var order []Knob
	var steps []step
	for _, it := range items {
		if it.spec.Order == Unordered {
			continue
		}
		if byKnob[it.spec.Knob] == nil {
			order = append(order, it.spec.Knob)
		}
		byKnob[it.spec.Knob] = append(byKnob[it.spec.Knob], it)
	}
	sort.Slice(order, func(i, j int) bool {
		a, _ := Lookup(order[i])
		b, _ := Lookup(order[j])
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return order[i] < order[j]
	})
	for _, k := range order {
		s, err := w.planKnob(byKnob[k])
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	for _, it := range items {
		if it.spec.Order == Unordered && !it.spec.Equal(w.h.version, it.cur, it.want) {
			steps = append(steps, step{it, it.want})
		}
	}
	return steps, nil
}

// planKnob reads the tree around one ordered knob's items and plans it.
func (w *Writer) planKnob(items []*item) ([]step, error) {
	spec, pl := items[0].spec, items[0].pl
	in := TreeInput{
		Knob:    spec.Knob,
		Order:   spec.Order,
		Strict:  spec.Order == Nested && w.h.version == V1,
		Current: map[string]string{},
		Want:    map[string]string{},
	}
	byRel := map[string]*item{}
	for _, it := range items {
		byRel[it.rel] = it
		in.Current[it.rel], in.Want[it.rel] = it.cur, it.want
	}
	for _, it := range items {
		for a, ok := parentRel(it.rel); ok; a, ok = parentRel(a) {
			if err := w.readInto(in.Current, pl, a); err != nil {
				return nil, err
			}
		}
		kids, err := w.h.Children(pl.Controller, it.rel)
		if err != nil {
			return nil, err
		}
		for _, c := range kids {
			if err := w.readInto(in.Current, pl, c); err != nil {
				return nil, err
			}
		}
	}
	planned, err := PlanTree(in)
	if err != nil {
		return nil, err
	}
	out := make([]step, len(planned))
	for i, s := range planned {
		out[i] = step{byRel[s.Cgroup], s.Value}
	}
	return out, nil
}

// readInto adds rel's value of the placement's file to m unless known or
// absent (v2 root cgroups have no cpuset.cpus or memory.min).
func (w *Writer) readInto(m map[string]string, pl *Placement, rel string) error {
	if _, known := m[rel]; known {
		return nil
	}
	path, err := w.h.file(pl.Controller, rel, pl.File)
	if err != nil {
		return err
	}
	v, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	m[rel] = v
	return nil
}

func dirOf(path string) string { return filepath.Dir(path) }

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
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
	// orig is what to record as the original if the file changes: its
	// current text, or a default for a FromDefaults cgroup.
	orig string
	// restore: the item writes back a recorded original.
	restore bool
}

type step struct {
	it    *item
	value string
}

// batchPlan is one batch resolved, read and ordered, not yet written.
type batchPlan struct {
	steps  []step
	last   map[*item]string // each changing item's final value
	forget []string         // keys of restored originals, dropped once written
	// defaults are items of marked cgroups given their original by the
	// mark (FromDefaults, ChildrenFromParent): recorded even if unchanged,
	// since Locus's value may already be there.
	defaults []*item
	// reset holds the originals of files the kernel resets when an item
	// changes (Spec.Resets), by key: recorded with the item's own.
	reset map[string]string
}

// prepare validates a batch, reads its files and orders its writes: ops
// first in the report, then restores. Files already right get Unchanged;
// the others Planned.
func (w *Writer) prepare(b Batch, rd *reads) (*batchPlan, Report, error) {
	targets := make([]Target, 0, len(b.Ops)+len(b.Restores))
	wants := make([]string, len(b.Ops))
	// The texts of the files the caller knows, by op: a slice, as a map
	// grown for every batch was 1 % of the bytes the agent allocated under
	// a 300-pod churn.
	var holds []knownText
	for i, op := range b.Ops {
		if op.Known {
			if holds == nil {
				holds = make([]knownText, len(b.Ops))
			}
			holds[i] = knownText{text: op.Holds, known: true}
		}
		spec, err := writableSpec(op.Knob)
		if err != nil {
			return nil, Report{}, err
		}
		if wants[i], err = spec.Encode(w.h.version, op.Value); err != nil {
			return nil, Report{}, fmt.Errorf("cgroup %q: %w", op.Cgroup, err)
		}
		targets = append(targets, Target{Cgroup: op.Cgroup, Knob: op.Knob})
	}
	for _, t := range b.Restores {
		if _, err := writableSpec(t.Knob); err != nil {
			return nil, Report{}, err
		}
		targets = append(targets, t)
	}
	items, rep, err := w.resolveAll(targets, holds, rd)
	if err != nil {
		return nil, rep, err
	}
	p := &batchPlan{last: map[*item]string{}}
	var keep []*item
	for _, it := range items {
		if it.idx < len(b.Ops) {
			it.want = wants[it.idx]
			if mark := w.markOf(it.rel, it.spec.Knob); mark != NoMark {
				_, known := w.store.Original(it.key)
				switch {
				case known:
				case mark == LeaveAlone:
					r := &rep.Results[it.idx]
					r.Outcome, r.After = NoOriginal, it.cur
					r.Reason = "its original was in a damaged originals checkpoint; left alone"
					continue
				case mark == ChildrenFromParent:
					if v, ok := w.parentOriginal(it.rel, it.pl); ok {
						it.orig = v
						p.defaults = append(p.defaults, it)
					}
				default:
					if it.orig, err = w.defaultOriginal(it, rd); err != nil {
						return nil, rep, err
					}
					p.defaults = append(p.defaults, it)
				}
			}
			keep = append(keep, it)
			if b.Ops[it.idx].Settle {
				p.forget = append(p.forget, it.key)
			}
			continue
		}
		orig, ok := w.store.Original(it.key)
		if !ok {
			r := &rep.Results[it.idx]
			r.Outcome, r.After, r.Reason = NoOriginal, it.cur, "no original recorded"
			continue
		}
		it.want, it.restore = orig, true
		keep = append(keep, it)
		p.forget = append(p.forget, it.key)
	}
	if p.steps, err = w.plan(keep, rd); err != nil {
		return nil, rep, err
	}
	for _, s := range p.steps {
		p.last[s.it] = s.value
	}
	if err := w.readResets(p, rd); err != nil {
		return nil, rep, err
	}
	for _, it := range keep {
		r := &rep.Results[it.idx]
		if v, ok := p.last[it]; ok {
			r.Outcome, r.After = Planned, v
		} else {
			r.Outcome, r.After = Unchanged, it.cur
		}
	}
	return p, rep, nil
}

// commit writes a prepared batch whose originals are recorded. It stops at
// the first failed write: that op is Failed, the later ones NotRun.
func (w *Writer) commit(p *batchPlan, rep *Report) error {
	for i, s := range p.steps {
		if err := w.write(s.it.path, s.value); err != nil {
			rep.Results[s.it.idx].Outcome = Failed
			for _, rest := range p.steps[i+1:] {
				if rep.Results[rest.it.idx].Outcome == Planned {
					rep.Results[rest.it.idx].Outcome = NotRun
				}
			}
			return err
		}
		rep.Writes = append(rep.Writes, FileWrite{s.it.path, s.value})
		if p.last[s.it] == s.value && rep.Results[s.it.idx].Outcome == Planned {
			rep.Results[s.it.idx].Outcome = Written
		}
	}
	return nil
}

// knownText is a file's text as the caller knows it, when it does.
type knownText struct {
	text  string
	known bool
}

// resolveAll checks every target, reads its file (but for the targets whose
// text holds gives, by index) and fills the report's results; targets the
// kernel or version lacks become Unsupported results and no item. A
// duplicate target is an error: the batch would contradict itself.
func (w *Writer) resolveAll(targets []Target, holds []knownText, rd *reads) ([]*item, Report, error) {
	rep := Report{Results: make([]Result, len(targets))}
	seen := make(map[Target]bool, len(targets))
	var items []*item
	for i, t := range targets {
		if seen[t] {
			return nil, rep, fmt.Errorf("cgroup %q: %s appears twice in one batch", t.Cgroup, t.Knob)
		}
		seen[t] = true
		rep.Results[i] = Result{Cgroup: t.Cgroup, Knob: t.Knob}
		var h knownText
		if i < len(holds) {
			h = holds[i]
		}
		it, reason, err := w.resolve(t, rd, h.text, h.known)
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
// With known, the file is taken to hold text and is not read.
func (w *Writer) resolve(t Target, rd *reads, text string, known bool) (*item, string, error) {
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
	// The file and its directory resolved once, as one string.
	path, dir, err := w.h.fileAndDir(pl.Controller, t.Cgroup, pl.File)
	if err != nil {
		return nil, "", err
	}
	// A directory the scope already knows (the executor asks DirID of
	// every cgroup it writes) is not looked at again.
	if _, seen := w.h.DirID(pl.Controller, t.Cgroup); !seen && !rd.isDir(dir) {
		return nil, "", fmt.Errorf("cgroup %q does not exist at %s", t.Cgroup, dir)
	}
	cur, err := text, error(nil)
	if !known {
		cur, err = w.h.readFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if pl.Extension {
			return nil, fmt.Sprintf("%s is absent: the kernel lacks this Alibaba Cloud Linux/Anolis extension", pl.File), nil
		}
		if pl.Since != "" {
			return nil, fmt.Sprintf("%s is absent: the kernel predates Linux %s, which added it", pl.File, pl.Since), nil
		}
		return nil, "", fmt.Errorf("%s is missing (is the controller enabled for cgroup %q?)", path, t.Cgroup)
	}
	if err != nil {
		return nil, "", err
	}
	return &item{rel: t.Cgroup, spec: spec, pl: pl, path: path, key: w.h.key(path), cur: cur, orig: w.originalOf(t, pl, cur)}, "", nil
}

func dirOf(path string) string { return filepath.Dir(path) }

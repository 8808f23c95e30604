package cgroup

import "path/filepath"

// The originals a batch records: a new v1 cpuset's from its parent, and
// the text of a file another's write is about to reset.

// originalOf is the value to record as the original of a file that holds
// cur. On cgroup v1 a new cpuset cgroup starts with empty cpuset.cpus and
// cpuset.mems, and the runtime gives it its parent's values just after
// making it: a write that comes in between (a container seen as its cgroup
// appears) would record the empty text, which the kernel refuses to take
// back once a task runs there. Its original is its parent's then: the
// parent's own original where Locus changed that, else its current value.
func (w *Writer) originalOf(t Target, pl *Placement, cur string) string {
	if cur != "" || w.h.version != V1 || (t.Knob != CPUSetCPUs && t.Knob != CPUSetMems) {
		return cur
	}
	if v, ok := w.parentOriginal(t.Cgroup, pl); ok {
		return v
	}
	return cur
}

// parentOriginal is the original of the same file in rel's parent: its
// recorded original where Locus changed it, else its current text.
func (w *Writer) parentOriginal(rel string, pl *Placement) (string, bool) {
	parent := filepath.Dir(rel)
	if parent == "." || parent == "/" || CheckRel(parent) != nil {
		return "", false
	}
	if v, ok := w.store.Original(OriginalKey(*pl, parent)); ok {
		return v, true
	}
	path, err := w.h.file(pl.Controller, parent, pl.File)
	if err != nil {
		return "", false
	}
	v, err := w.h.readFile(path)
	return v, err == nil
}

// readResets reads, for every item about to change whose knob resets
// another (Spec.Resets), that other file's text now: its original, which the
// kernel is about to lose. Only writes count: a restore puts back the state
// the other file's original was read in.
func (w *Writer) readResets(p *batchPlan, rd *reads) error {
	for it := range p.last {
		if it.spec.Resets == "" || it.restore {
			continue
		}
		other, _ := Lookup(it.spec.Resets)
		pl := other.Placement(w.h.version)
		if pl == nil {
			continue
		}
		path, err := w.h.file(pl.Controller, it.rel, pl.File)
		if err != nil {
			return err
		}
		f, err := rd.file(path)
		if err != nil {
			return err
		}
		if f.present {
			if p.reset == nil {
				p.reset = map[string]string{}
			}
			p.reset[w.h.key(path)] = f.text
		}
	}
	return nil
}

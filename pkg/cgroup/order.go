package cgroup

import "sort"

// plan orders the writes: tree-ordered knobs first (cpusets, then memory
// protections), each through PlanTree, then the rest in batch order.
func (w *Writer) plan(items []*item, rd *reads) ([]step, error) {
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
		s, err := w.planKnob(byKnob[k], rd)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	// A knob the kernel resets another by goes first (cpu.idle before
	// cpu.shares), and the other is then written even if it read right
	// before: the kernel is about to change it.
	type target struct {
		rel  string
		knob Knob
	}
	reset := map[target]bool{}
	for _, first := range []bool{true, false} {
		for _, it := range items {
			if it.spec.Order != Unordered || (it.spec.Resets != "") != first {
				continue
			}
			if !it.spec.Equal(w.h.version, it.cur, it.want) || reset[target{it.rel, it.spec.Knob}] {
				steps = append(steps, step{it, it.want})
				if it.spec.Resets != "" {
					reset[target{it.rel, it.spec.Resets}] = true
				}
			}
		}
	}
	return steps, nil
}

// planKnob reads the tree around one ordered knob's items and plans it.
func (w *Writer) planKnob(items []*item, rd *reads) ([]step, error) {
	spec, pl := items[0].spec, items[0].pl
	if !anyDiffers(items) {
		return nil, nil // nothing moves, so nothing needs ordering
	}
	in := TreeInput{
		Knob:   spec.Knob,
		Order:  spec.Order,
		Strict: spec.Order == Nested && w.h.version == V1,
		// Sized for the items: grown from empty, a pool's change over
		// hundreds of pods rehashed them several times.
		Current: make(map[string]string, len(items)),
		Want:    make(map[string]string, len(items)),
	}
	byRel := make(map[string]*item, len(items))
	tried := make(map[string]bool, len(items))
	for _, it := range items {
		byRel[it.rel], tried[it.rel] = it, true
		in.Current[it.rel], in.Want[it.rel] = it.cur, it.want
	}
	read := func(rel string) error {
		if tried[rel] {
			return nil
		}
		tried[rel] = true
		path, err := w.h.file(pl.Controller, rel, pl.File)
		if err != nil {
			return err
		}
		f, err := rd.file(path)
		if f.present {
			in.Current[rel] = f.text
		}
		return err
	}
	for _, it := range items {
		// A lenient plan looks at an ancestor only to find a target's
		// nearest parent (a target widens for its changing children): the
		// ancestors of an item with no target above it change nothing, and
		// are not read. When a shared pool changes, that spares a read of
		// every pod's file for each of its containers' writes.
		look := in.Strict || targetAbove(it.rel, byRel)
		for a, ok := parentRel(it.rel); ok && look; a, ok = parentRel(a) {
			if err := read(a); err != nil {
				return nil, err
			}
		}
		if !in.Strict {
			// Only a strict plan checks children it does not change; a
			// lenient one orders targets among themselves and their
			// ancestors, so listing children would cost a directory read
			// per target for nothing.
			continue
		}
		kids, err := rd.children(w.h, pl.Controller, it.rel)
		if err != nil {
			return nil, err
		}
		for _, c := range kids {
			if err := read(c); err != nil {
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

// targetAbove says whether an ancestor of rel is one of the targets.
func targetAbove(rel string, targets map[string]*item) bool {
	for a, ok := parentRel(rel); ok; a, ok = parentRel(a) {
		if _, t := targets[a]; t {
			return true
		}
	}
	return false
}

// anyDiffers reports whether some item's file text is not the text it
// wants. Equal text is an equal value; different text may still be (0-3 and
// 0,1,2,3), which PlanTree sorts out.
func anyDiffers(items []*item) bool {
	for _, it := range items {
		if it.cur != it.want {
			return true
		}
	}
	return false
}

package cgroup

import (
	"fmt"
)

// TreeInput is one ordered knob's values over a tree of cgroups. A cgroup's
// parent is its nearest ancestor present in Current.
type TreeInput struct {
	Knob  Knob // only for messages
	Order Order
	// Strict refuses a batch whose final state, or any step on the way, has a
	// child outside its parent: the v1 cpuset rule the kernel enforces.
	Strict bool
	// Current holds the value now of every target, of its ancestors that
	// have the file, and, when Strict, of its direct children (the executor
	// reads them; only the nesting check looks at children it does not
	// change).
	Current map[string]string
	// Want holds the desired value of each target.
	Want map[string]string
}

// Step is one file write the plan makes, in execution order.
type Step struct {
	Cgroup string
	Value  string
}

// PlanTree orders the writes of one knob so every parent stays a superset of
// its children throughout. Phase one goes top-down: a target whose children
// also change only widens, to the union of what it holds, what it ends with
// and what those children will hold on the way (parents widen before
// children move in); a target without changing children is written its final
// value. Phase two goes bottom-up and narrows the widened targets to their
// final values (children narrow before parents). Writes that change nothing
// are skipped, so each cgroup costs at most one write unless both it and a
// child change and it must hold their union for a moment.
func PlanTree(in TreeInput) ([]Step, error) {
	lat, err := latticeFor(in.Order)
	if err != nil {
		return nil, err
	}
	targets := make([]string, 0, len(in.Want))
	for t := range in.Want {
		if _, ok := in.Current[t]; !ok {
			return nil, fmt.Errorf("%s: no current value for cgroup %q", in.Knob, t)
		}
		targets = append(targets, t)
	}
	sortTopDown(targets)
	for c, v := range in.Current {
		if _, target := in.Want[c]; !target && !in.Strict {
			continue // only a strict plan compares values it does not change
		}
		if err := lat.check(v); err != nil {
			return nil, fmt.Errorf("%s of cgroup %q: current value %q: %v", in.Knob, c, v, err)
		}
	}
	for c, v := range in.Want {
		if err := lat.check(v); err != nil {
			return nil, fmt.Errorf("%s of cgroup %q: wanted value %q: %v", in.Knob, c, v, err)
		}
	}
	parent := func(c string) (string, bool) {
		for p, ok := parentRel(c); ok; p, ok = parentRel(p) {
			if _, present := in.Current[p]; present {
				return p, true
			}
		}
		return "", false
	}
	final := func(c string) string {
		if w, ok := in.Want[c]; ok {
			return w
		}
		return in.Current[c]
	}

	// Phase-one values, children before parents. A target with changing
	// children widens to cover what it holds, what it ends with and their
	// phase-one values; a target without goes straight to its final value,
	// which its parent's phase-one value already covers.
	first := make(map[string]string, len(targets))
	kids := map[string]string{} // join of the changing children's phase-one values
	for i := len(targets) - 1; i >= 0; i-- {
		t := targets[i]
		first[t] = in.Want[t]
		if k, ok := kids[t]; ok {
			first[t] = lat.join(k, lat.join(in.Current[t], in.Want[t]))
		}
		if p, ok := parent(t); ok {
			if _, isTarget := in.Want[p]; isTarget {
				if k, seen := kids[p]; seen {
					kids[p] = lat.join(k, first[t])
				} else {
					kids[p] = first[t]
				}
			}
		}
	}

	if in.Strict {
		if err := checkNested(in, lat, parent, final, first); err != nil {
			return nil, err
		}
	}

	var steps []Step
	for _, t := range targets {
		if !lat.eq(first[t], in.Current[t]) {
			steps = append(steps, Step{t, first[t]})
		}
	}
	for i := len(targets) - 1; i >= 0; i-- {
		t := targets[i]
		if !lat.eq(in.Want[t], first[t]) {
			steps = append(steps, Step{t, in.Want[t]})
		}
	}
	return steps, nil
}

// checkNested verifies that the final tree nests and that each target's
// phase-one value fits a parent the batch does not change.
func checkNested(in TreeInput, lat lattice, parent func(string) (string, bool),
	final func(string) string, first map[string]string) error {
	for c := range in.Current {
		p, ok := parent(c)
		if !ok {
			continue
		}
		_, cT := in.Want[c]
		_, pT := in.Want[p]
		if !cT && !pT {
			continue
		}
		if !lat.leq(final(c), final(p)) {
			return fmt.Errorf("%s: cgroup %q would hold %q, not within its parent %q (%q)",
				in.Knob, c, final(c), p, final(p))
		}
	}
	for t, v := range first {
		p, ok := parent(t)
		if _, pT := in.Want[p]; !ok || pT {
			continue
		}
		if !lat.leq(v, in.Current[p]) {
			return fmt.Errorf("%s: cgroup %q needs %q on the way, not within its unchanged parent %q (%q)",
				in.Knob, t, v, p, in.Current[p])
		}
	}
	return nil
}

// lattice is the partial order a Nested or Protection knob's values form.
// Values were checked before join and leq see them.
type lattice struct {
	check func(string) error
	join  func(a, b string) string
	leq   func(a, b string) bool
	eq    func(a, b string) bool
}

func latticeFor(o Order) (lattice, error) {
	switch o {
	case Nested:
		return lattice{
			check: func(s string) error { _, err := parseSpans(s); return err },
			join:  func(a, b string) string { return mustSpans(a).union(mustSpans(b)).String() },
			leq:   func(a, b string) bool { return mustSpans(a).within(mustSpans(b)) },
			eq:    func(a, b string) bool { return mustSpans(a).equal(mustSpans(b)) },
		}, nil
	case Protection:
		n := func(s string) int64 { v, _ := normBytes(s); return v }
		return lattice{
			check: func(s string) error { _, err := normBytes(s); return err },
			join: func(a, b string) string {
				if n(b) > n(a) {
					return b
				}
				return a
			},
			leq: func(a, b string) bool { return n(a) <= n(b) },
			eq:  func(a, b string) bool { return n(a) == n(b) },
		}, nil
	}
	return lattice{}, fmt.Errorf("order %d has no tree plan", o)
}

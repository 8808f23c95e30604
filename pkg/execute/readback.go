package execute

import (
	"io/fs"

	"github.com/locus-project/locus/pkg/cgroup"
)

// Reader reads cgroups back for the status (a publish.Reader): the files an
// Apply read or wrote from what it knows they hold (its ReadBack), the others
// from the hierarchy.
type Reader struct {
	h     *cgroup.Hierarchy
	seen  ReadBack
	e     *Executor // its trusted files and remembered reads, when it rechecks (confirm.go); may be nil
	apply uint64    // the Apply whose trusted files it takes from e
}

// On reads the cgroups of h, taking the files rb knows from rb.
func (rb ReadBack) On(h *cgroup.Hierarchy) Reader { return Reader{h: h, seen: rb} }

// Reader reads the cgroups for the status after the last Apply, which saw
// seen, with the files it trusted and the reads the executor remembers.
func (e *Executor) Reader(seen ReadBack) Reader {
	return Reader{h: e.c.Hierarchy, seen: seen, e: e, apply: e.applies}
}

func (r Reader) Version() cgroup.Version         { return r.h.Version() }
func (r Reader) Exists(rel string) bool          { return r.h.Exists(cgroup.CPUSet, rel) }
func (r Reader) Procs(rel string) ([]int, error) { return r.cachedProcs(rel) }

func (r Reader) ReadKnob(rel string, k cgroup.Knob) (string, error) {
	if f, ok := r.e.held(r.seen, r.apply, rel, k); ok {
		if !f.Present {
			return "", fs.ErrNotExist
		}
		return f.Text, nil
	}
	return r.cachedKnob(rel, k)
}

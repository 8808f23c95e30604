package execute

import (
	"io/fs"

	"github.com/locus-project/locus/pkg/cgroup"
)

// Reader reads cgroups back for the status (a publish.Reader): the files an
// Apply read or wrote from what it knows they hold (its ReadBack), the others
// from the hierarchy.
type Reader struct {
	h    *cgroup.Hierarchy
	seen ReadBack
}

// On reads the cgroups of h, taking the files rb knows from rb.
func (rb ReadBack) On(h *cgroup.Hierarchy) Reader { return Reader{h, rb} }

func (r Reader) Version() cgroup.Version         { return r.h.Version() }
func (r Reader) Exists(rel string) bool          { return r.h.Exists(cgroup.CPUSet, rel) }
func (r Reader) Procs(rel string) ([]int, error) { return r.h.Procs(rel) }

func (r Reader) ReadKnob(rel string, k cgroup.Knob) (string, error) {
	if f, ok := r.seen[rel][k]; ok {
		if !f.Present {
			return "", fs.ErrNotExist
		}
		return f.Text, nil
	}
	return r.h.ReadKnob(rel, k)
}

package execute

import (
	"errors"
	"fmt"
	"sort"

	"github.com/locus-project/locus/pkg/cgroup"
)

// Cgroups is the executor of a process beside the agent (`locus run`, the
// shim that starts a command workload in its cgroup, `locus uninstall`):
// it holds that process's one cgroup writer, and carries out what such a
// process may do to cgroups: create and remove the cgroups it owns, write a
// decision's files into them, move processes in, and give back the
// originals the agent kept.
type Cgroups struct{ w *cgroup.Writer }

// NewCgroups is the executor of a process beside the agent on h, keeping
// originals and the marks of the cgroups it creates in store.
func NewCgroups(h *cgroup.Hierarchy, store cgroup.OriginalStore) (*Cgroups, error) {
	w, err := cgroup.NewWriter(h, store)
	if err != nil {
		return nil, err
	}
	return &Cgroups{w: w}, nil
}

// Hierarchy is the hierarchy written.
func (c *Cgroups) Hierarchy() *cgroup.Hierarchy { return c.w.Hierarchy() }

// Ensure creates cgroup rel and its missing ancestors (cgroup.Writer.EnsureCgroup).
func (c *Cgroups) Ensure(rel string) ([]string, error) { return c.w.EnsureCgroup(rel) }

// Remove removes cgroup rel where this process's store says it created it.
func (c *Cgroups) Remove(rel string) error { return c.w.RemoveCgroup(rel) }

// Join moves processes into cgroup rel.
func (c *Cgroups) Join(rel string, pids ...int) (cgroup.ProcsReport, error) {
	return c.w.AddProcs(rel, pids)
}

// Write brings the files of a decision to their values, in order.
func (c *Cgroups) Write(ops []cgroup.Op) (cgroup.Report, error) { return c.w.Apply(ops) }

// RestoreOriginals writes back every original recorded in store (the
// agent's, as `locus uninstall` undoes it), ancestors before descendants (a
// v1 cpuset must fit in its parent's), and forgets each once written. The
// originals of cgroups removed meanwhile (a pod that ended) are forgotten
// and counted as gone, and so are the marks of the cgroups it created.
func (c *Cgroups) RestoreOriginals(store *cgroup.FileStore) (restored, gone int, err error) {
	h := c.w.Hierarchy()
	byCgroup := map[string][]cgroup.Target{}
	var marks []string
	for _, key := range store.Keys() {
		_, cg, knob, ok := cgroup.ParseOriginalKey(h.Version(), key)
		if !ok {
			marks = append(marks, key) // a creation mark, or a file this build does not know
			continue
		}
		byCgroup[cg] = append(byCgroup[cg], cgroup.Target{Cgroup: cg, Knob: knob})
	}
	cgs := make([]string, 0, len(byCgroup))
	for cg := range byCgroup {
		cgs = append(cgs, cg)
	}
	sort.Strings(cgs) // a parent sorts before its children
	for _, cg := range cgs {
		rep, err := c.w.Restore(byCgroup[cg])
		if errors.Is(err, cgroup.ErrCgroupGone) || (err == nil && allGone(rep)) {
			gone += len(byCgroup[cg])
			continue
		}
		if err != nil {
			return restored, gone, fmt.Errorf("%s: %w", cg, err)
		}
		restored += len(byCgroup[cg])
	}
	// What is left names cgroups that are gone, or marks: nothing to write back.
	return restored, gone, store.Forget(append(marks, store.Keys()...)...)
}

func allGone(rep cgroup.Report) bool {
	for _, r := range rep.Results {
		if r.Outcome != cgroup.Gone {
			return false
		}
	}
	return len(rep.Results) > 0
}

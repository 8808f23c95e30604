package execute

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
)

// restoreBelow finishes the removal of a pod: the agent wrote its container
// cgroups, children of the pod cgroup, which restoreAll (the pod cgroup's
// own files) does not cover. Files of containers still there get their
// original values back; the originals of cgroups that are gone (the kubelet
// removed the pod) are forgotten, so originals.json does not keep growing
// with every pod the node has run.
func (e *Executor) restoreBelow(name, rel string, res *Report) error {
	lister, ok := e.c.Originals.(interface{ Keys() []string })
	if !ok {
		return nil
	}
	var targets []cgroup.Target
	var gone []string
	for _, key := range lister.Keys() {
		ctrl, cg, knob, ok := cgroup.ParseOriginalKey(e.c.Hierarchy.Version(), key)
		if !ok || (cg != rel && !strings.HasPrefix(cg, rel+"/")) {
			continue
		}
		switch {
		case !e.c.Hierarchy.Exists(ctrl, cg):
			gone = append(gone, key)
		case cg != rel: // rel's own files are restoreAll's
			targets = append(targets, cgroup.Target{Cgroup: cg, Knob: knob})
		}
	}
	if e.c.DryRun {
		for _, t := range targets {
			fmt.Fprintf(e.c.Out, "restore %s %s\n", t.Cgroup, t.Knob)
		}
		return nil
	}
	if len(targets) > 0 {
		rep, err := e.c.Writer.Restore(targets)
		owner := map[string]string{}
		for _, t := range targets {
			owner[t.Cgroup] = name
		}
		e.account(rep, owner, res)
		if err != nil {
			return fmt.Errorf("restore the containers of %s: %w", rel, err)
		}
	}
	if len(gone) > 0 {
		if err := e.c.Originals.Forget(gone...); err != nil {
			return fmt.Errorf("forget the originals of removed cgroups under %s: %w", rel, err)
		}
	}
	return nil
}

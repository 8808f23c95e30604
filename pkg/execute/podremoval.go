package execute

import (
	"fmt"
	"path"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/state"
)

// originalKey is a key of the originals store, parsed.
type originalKey struct {
	key  string
	ctrl cgroup.Controller
	cg   string
	knob cgroup.Knob
}

// originalsBelow lists, for the cgroup of each workload of ws, the
// originals recorded for it and the cgroups below it (a pod's containers',
// a libvirt domain's threads'), parsing the store's keys once for all of
// them. A cgroup below that is kept (another workload's, or under one) is
// not listed: its files are its own workload's.
func (e *Executor) originalsBelow(ws map[string]state.Workload, keep map[string]bool) map[string][]originalKey {
	lister, ok := e.c.Originals.(interface{ Keys() []string })
	if !ok || len(ws) == 0 {
		return nil
	}
	removing := make(map[string]bool, len(ws))
	for _, w := range ws {
		removing[w.Cgroup] = true
	}
	out := map[string][]originalKey{}
	for _, key := range lister.Keys() {
		ctrl, cg, knob, ok := cgroup.ParseOriginalKey(e.c.Hierarchy.Version(), key)
		if !ok {
			continue
		}
		kept := false
		for p := cg; p != "." && p != "/" && p != ""; p = path.Dir(p) {
			if removing[p] && !kept {
				out[p] = append(out[p], originalKey{key: key, ctrl: ctrl, cg: cg, knob: knob})
			}
			kept = kept || (keep[p] && !removing[p])
		}
	}
	return out
}

// restoreBelow finishes the removal of a pod or a libvirt domain: the agent
// wrote its container (thread) cgroups, children of its cgroup, which
// restoreAll (that cgroup's own files) does not cover. Files of containers still there get their
// original values back; the keys of the originals of cgroups that are gone
// (the kubelet removed the pod) are returned, to be forgotten, so
// originals.json does not keep growing with every pod the node has run.
// below are the originals recorded for rel and under it (originalsBelow).
func (e *Executor) restoreBelow(name, rel string, below []originalKey, res *Report) (gone []string, err error) {
	var targets []cgroup.Target
	exists := dirLooks{h: e.c.Hierarchy}
	for _, k := range below {
		if _, ok := e.c.Originals.Original(k.key); !ok {
			continue // restored by an attempt before
		}
		switch {
		case !exists.of(k.ctrl, k.cg):
			gone = append(gone, k.key)
		case k.cg != rel: // rel's own files are restoreAll's
			targets = append(targets, cgroup.Target{Cgroup: k.cg, Knob: k.knob})
		}
	}
	if e.c.DryRun {
		for _, t := range targets {
			fmt.Fprintf(e.c.Out, "restore %s %s\n", t.Cgroup, t.Knob)
		}
		return nil, nil
	}
	if len(targets) > 0 {
		rep, err := e.w.Restore(targets)
		owner := map[string]string{}
		for _, t := range targets {
			owner[t.Cgroup] = name
		}
		e.account(rep, owner, nil, nil, nil, res)
		if err != nil {
			return gone, fmt.Errorf("restore the containers of %s: %w", rel, err)
		}
	}
	return gone, nil
}

// forget drops the originals of removed cgroups, in one update.
func (e *Executor) forget(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := e.c.Originals.Forget(keys...); err != nil {
		return fmt.Errorf("forget the originals of removed cgroups: %w", err)
	}
	return nil
}

package execute

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
)

// CheckOriginals compares the originals checkpoint (file, in the store's
// directory) with the checkpoint of the cgroups the agent touched. Originals lost while the checkpoint still
// names touched cgroups would be taken from files holding Locus's own
// values: those cgroups are marked to take their parent's values or the
// kernel's defaults instead. Originals set aside as corrupt are unknown:
// those cgroups are marked to be left alone. Either way the agent starts,
// and says so loudly.
func CheckOriginals(originals *cgroup.FileStore, store state.State, path string, events Emitter, log *slog.Logger) error {
	damaged := originals.Damage()
	if damaged == "" && originals.Existed() {
		return nil
	}
	ck, err := store.Load()
	if err != nil {
		return nil // a corrupt checkpoint is rebuilt by the first reconcile
	}
	var touched []string
	for _, name := range slices.Sorted(maps.Keys(ck.Workloads)) {
		touched = append(touched, ck.Workloads[name].Cgroup)
	}
	for _, name := range slices.Sorted(maps.Keys(ck.Leases)) {
		touched = append(touched, ck.Leases[name].Cgroup)
	}
	switch {
	case damaged != "":
		if err := originals.SetMark(cgroup.LeaveAlone, touched...); err != nil {
			return err
		}
		log.Error("originals checkpoint damaged: files of these cgroups without a known original are left alone",
			"damage", damaged, "cgroups", touched)
		events.Emit(eventlog.Warning, "OriginalsCorrupt", "", "%s; the cgroups Locus had changed (%s) keep their "+
			"values and are not written until their workloads are removed", damaged, strings.Join(touched, ", "))
	case len(touched) > 0:
		if err := originals.SetMark(cgroup.FromDefaults, touched...); err != nil {
			return err
		}
		log.Error("originals checkpoint lost: the cgroups Locus had changed will be restored to their parent's values or the kernel's defaults",
			"file", path, "cgroups", touched)
		events.Emit(eventlog.Warning, "OriginalsLost", "", "%s is missing although Locus had changed cgroups %s: their files "+
			"will be restored to their parent's values (cpusets) or the kernel's defaults, not to values they had before Locus",
			path, strings.Join(touched, ", "))
	}
	return nil
}

// RebuildCheckpoint replaces a corrupt checkpoint with what can be observed:
// every cgroup the originals checkpoint records a value or a creation for
// outside the configured workloads' cgroups (topmost only: a pod's
// containers go with it) becomes an entry named after the cgroup
// ("recovered:<cgroup>"). The reconcile then re-records the configured
// workloads (re-adopting their running commands) and removes the others,
// restoring their originals. Only the CPU assignments and `locus run`
// leases are lost: they are decided afresh. A dry run rebuilds nothing: it
// returns cause.
func (e *Executor) RebuildCheckpoint(cause error, configured []string) (state.Checkpoint, error) {
	if e.c.DryRun {
		return state.Checkpoint{}, cause
	}
	observe := func() state.Checkpoint {
		ck := state.Empty()
		lister, ok := e.c.Originals.(interface{ Keys() []string })
		if !ok {
			return ck
		}
		var cgs []string
		for _, key := range lister.Keys() {
			if cg, ok := e.cgroupOfKey(key); ok {
				cgs = append(cgs, cg)
			}
		}
		sort.Strings(cgs) // ancestors first
		covered := func(cg string) bool {
			for _, c := range configured {
				if cg == c || strings.HasPrefix(cg, c+"/") {
					return true
				}
			}
			for _, w := range ck.Workloads {
				if cg == w.Cgroup || strings.HasPrefix(cg, w.Cgroup+"/") {
					return true
				}
			}
			return false
		}
		for _, cg := range cgs {
			if !covered(cg) {
				ck.Workloads[recoveredPrefix+cg] = state.Workload{Cgroup: cg}
			}
		}
		return ck
	}
	aside, err := e.c.Store.Rebuild(observe)
	if err != nil {
		return state.Checkpoint{}, fmt.Errorf("%v; rebuilding it failed: %w", cause, err)
	}
	if aside != "" {
		e.c.Log.Error("checkpoint corrupt: rebuilt from the cgroups Locus recorded", "err", cause, "setAside", aside)
		e.c.Events.Emit(eventlog.Warning, "CheckpointRebuilt", "", "%v; rebuilt from the cgroups recorded in %s, the corrupt file kept as %s",
			cause, e.c.OriginalsFile, aside)
	}
	return e.c.Store.Load()
}

// recoveredPrefix names the checkpoint entries of a rebuilt checkpoint.
const recoveredPrefix = "recovered:"

// cgroupOfKey is the cgroup of an originals key: a file's, or a creation
// mark's (which ends in "/").
func (e *Executor) cgroupOfKey(key string) (string, bool) {
	if dir, ok := strings.CutSuffix(key, "/"); ok {
		if e.c.Hierarchy.Version() == cgroup.V1 {
			_, dir, ok = strings.Cut(dir, "/")
		}
		return dir, ok && dir != "" && cgroup.CheckRel(dir) == nil
	}
	_, cg, _, ok := cgroup.ParseOriginalKey(e.c.Hierarchy.Version(), key)
	return cg, ok
}

package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
)

// readOriginals loads the originals checkpoint into memory without touching
// the state directory, for --dry-run (cgroup.OpenFileStore would create the
// directory and tidy it). A missing file is an empty store.
func readOriginals(path string) (cgroup.OriginalStore, error) {
	s := cgroup.NewMemoryStore()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Originals map[string]string `json:"originals"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, s.RecordOriginals(f.Originals)
}

// checkOriginals compares the originals checkpoint with the checkpoint of
// the cgroups the agent touched. Originals lost while the checkpoint still
// names touched cgroups would be taken from files holding Locus's own
// values: those cgroups are marked to take their parent's values or the
// kernel's defaults instead. Originals set aside as corrupt are unknown:
// those cgroups are marked to be left alone. Either way the agent starts,
// and says so loudly.
func (a *Agent) checkOriginals(store *cgroup.FileStore) error {
	damaged := store.Damage()
	if damaged == "" && store.Existed() {
		return nil
	}
	ck, err := a.store.Load()
	if err != nil {
		return nil // a corrupt checkpoint is rebuilt by the first reconcile
	}
	var touched []string
	for _, name := range sortedKeys(ck.Workloads) {
		touched = append(touched, ck.Workloads[name].Cgroup)
	}
	for _, name := range sortedKeys(ck.Leases) {
		touched = append(touched, ck.Leases[name].Cgroup)
	}
	switch {
	case damaged != "":
		if err := store.SetMark(cgroup.LeaveAlone, touched...); err != nil {
			return err
		}
		a.log.Error("originals checkpoint damaged: files of these cgroups without a known original are left alone",
			"damage", damaged, "cgroups", touched)
		a.events.Emit(eventlog.Warning, "OriginalsCorrupt", "", "%s; the cgroups Locus had changed (%s) keep their "+
			"values and are not written until their workloads are removed", damaged, strings.Join(touched, ", "))
	case len(touched) > 0:
		if err := store.SetMark(cgroup.FromDefaults, touched...); err != nil {
			return err
		}
		a.log.Error("originals checkpoint lost: the cgroups Locus had changed will be restored to their parent's values or the kernel's defaults",
			"file", a.store.Path(OriginalsFile), "cgroups", touched)
		a.events.Emit(eventlog.Warning, "OriginalsLost", "", "%s is missing although Locus had changed cgroups %s: their files "+
			"will be restored to their parent's values (cpusets) or the kernel's defaults, not to values they had before Locus",
			a.store.Path(OriginalsFile), strings.Join(touched, ", "))
	}
	return nil
}

// rebuildCheckpoint replaces a corrupt checkpoint with what can be observed:
// every cgroup the originals checkpoint records a value or a creation for
// outside the configured workloads' (topmost only: a pod's containers go
// with it) becomes an entry named after the cgroup ("recovered:<cgroup>"). The reconcile then re-records the configured
// workloads (re-adopting their running commands) and removes the others,
// restoring their originals. Only the CPU assignments and `locus run`
// leases are lost: they are decided afresh.
func (a *Agent) rebuildCheckpoint(cause error, rs []resolved) (state.Checkpoint, error) {
	observe := func() state.Checkpoint {
		ck := state.Empty()
		lister, ok := a.originals.(interface{ Keys() []string })
		if !ok {
			return ck
		}
		var cgs []string
		for _, key := range lister.Keys() {
			if cg, ok := a.cgroupOfKey(key); ok {
				cgs = append(cgs, cg)
			}
		}
		sort.Strings(cgs) // ancestors first
		covered := func(cg string) bool {
			for _, r := range rs {
				if cg == r.cgroup || strings.HasPrefix(cg, r.cgroup+"/") {
					return true
				}
			}
			for _, e := range ck.Workloads {
				if cg == e.Cgroup || strings.HasPrefix(cg, e.Cgroup+"/") {
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
	aside, err := a.store.Rebuild(observe)
	if err != nil {
		return state.Checkpoint{}, fmt.Errorf("%v; rebuilding it failed: %w", cause, err)
	}
	if aside != "" {
		a.log.Error("checkpoint corrupt: rebuilt from the cgroups Locus recorded", "err", cause, "setAside", aside)
		a.events.Emit(eventlog.Warning, "CheckpointRebuilt", "", "%v; rebuilt from the cgroups recorded in %s, the corrupt file kept as %s",
			cause, OriginalsFile, aside)
	}
	return a.store.Load()
}

// recoveredPrefix names the checkpoint entries of a rebuilt checkpoint.
const recoveredPrefix = "recovered:"

// cgroupOfKey is the cgroup of an originals key: a file's, or a creation
// mark's (which ends in "/").
func (a *Agent) cgroupOfKey(key string) (string, bool) {
	if dir, ok := strings.CutSuffix(key, "/"); ok {
		if a.h.Version() == cgroup.V1 {
			_, dir, ok = strings.Cut(dir, "/")
		}
		return dir, ok && dir != "" && cgroup.CheckRel(dir) == nil
	}
	_, cg, _, ok := cgroup.ParseOriginalKey(a.h.Version(), key)
	return cg, ok
}

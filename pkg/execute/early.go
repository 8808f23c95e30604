package execute

import (
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cgroupfile"
)

// Early is the executor's path for a container cgroup that appears between
// two reconciles under a pod the last decision gave a cpuset for its new
// containers (pkg/kube/earlypin): it writes that cpuset, the decision's
// own ops (decide.PodCPUSet.Ops), at once. It has a writer of its own on
// the agent's hierarchy and originals: the reconcile's is held for the
// whole of its writes, which this path exists not to wait for.
//
// A container's original cpuset is its pod's, the value a runtime gives a
// container of a pod no one pins: Mark marks the pods' cgroups so
// (cgroup.ChildrenFromParent, durably, once), and the containers'
// originals reach the disk with the store's next save
// (cgroup.FileStore.Covered), not before each write.
type Early struct {
	w  *cgroup.Writer
	fs *cgroup.FileStore // nil: a store without marks (a test's, a dry run's)
}

// NewEarly is the early path on h, keeping originals in store; under
// dryRun it only plans.
func NewEarly(h *cgroup.Hierarchy, store cgroup.OriginalStore, dryRun bool) (*Early, error) {
	fs, _ := store.(*cgroup.FileStore)
	if fs != nil {
		store = fs.Covered(h.Version())
	}
	w, err := cgroup.NewWriter(h, store)
	if err != nil {
		return nil, err
	}
	w.DryRun = dryRun
	return &Early{w: w, fs: fs}, nil
}

// Hierarchy resolves the pods' cgroup directories.
func (x *Early) Hierarchy() *cgroup.Hierarchy { return x.w.Hierarchy() }

// Mark marks the pod cgroups ChildrenFromParent, those not marked before in
// one durable update; with an error, none of them may be written early. A
// store without marks records every original as it always does: nothing
// to mark.
func (x *Early) Mark(pods []string) error {
	if x.fs == nil || len(pods) == 0 || x.w.DryRun {
		return nil
	}
	return x.fs.MarkUnmarked(cgroup.ChildrenFromParent, pods...)
}

// Apply writes one container's cpuset.mems and cpuset.cpus.
func (x *Early) Apply(ops []cgroupfile.Op) error {
	_, err := x.w.Apply(ops)
	return err
}

package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// stamp identifies one version of a file: atomic replacement gives it a new
// inode, an append a new size.
type stamp struct {
	ino  uint64
	size int64
}

func stamps(t *testing.T, dir string) map[string]stamp {
	t.Helper()
	out := map[string]stamp{}
	for _, name := range []string{"checkpoint.json", OriginalsFile, status.File, eventlog.EventsFile} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = stamp{fi.Sys().(*syscall.Stat_t).Ino, fi.Size()}
	}
	return out
}

// TestResyncAtRestWritesNothing: a reconcile with nothing to change reuses
// the last decision and writes no state file, and drift is repaired within
// a resync; any change to what the decision depends on (here a lease)
// decides again.
func TestResyncAtRestWritesNothing(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, true, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	const resync = 100 * time.Millisecond
	h := newHarness(t, tree, redisAndBatch, func(o *Options) { o.Resync = resync })
	h.reconcile()
	h.reconcile() // the first decision had no previous assignments as input
	before, memo, files := stamps(t, h.opts.StateDir), h.a.mem.Last, tree.snapshot()
	time.Sleep(10 * time.Millisecond) // a rewrite would show in the time, too
	if res := h.reconcile(); res.Writes != 0 {
		t.Fatalf("a reconcile at rest wrote %d cgroup files", res.Writes)
	}
	for name, s := range stamps(t, h.opts.StateDir) {
		if s != before[name] {
			t.Errorf("%s was written at rest", name)
		}
	}
	if h.a.mem.Last != memo {
		t.Error("the decision was computed again with the same input")
	}
	if h.a.pub.Current().Time.Equal(time.Time{}) || !h.a.pub.Current().Time.After(mustStatus(t, h).Time) {
		t.Error("/status does not show the last reconcile's time")
	}
	// Drift is still repaired at rest, once the file's recheck is due.
	tree.set("", "pods/batch", "cpuset.cpus", "0-3")
	time.Sleep(resync)
	if res := h.reconcile(); res.Writes != 1 || tree.file("pods/batch", "cpuset.cpus") != files["/pods/batch/cpuset.cpus"] {
		t.Errorf("drift not repaired: %d writes, cpuset.cpus %q", res.Writes, tree.file("pods/batch", "cpuset.cpus"))
	}
	lease := state.Lease{Cgroup: "locus.slice/run-1", Owner: self(t),
		Assignment: workload.Assignment{CPUs: cpuset.New(3), Policy: "full-pcpus"}}
	if err := h.a.store.Update(func(c *state.Checkpoint) error { c.Leases["run-1"] = lease; return nil }); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	if h.a.mem.Last == memo || h.checkpoint().Assignments["redis"].CPUs.Contains(3) {
		t.Error("a new lease did not lead to a new decision")
	}
	if stamps(t, h.opts.StateDir)[status.File] == before[status.File] {
		t.Error("status.json not rewritten after the shared pool changed")
	}
}

func mustStatus(t *testing.T, h *harness) status.Status {
	t.Helper()
	st, err := status.Read(h.opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

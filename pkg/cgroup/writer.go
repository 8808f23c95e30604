package cgroup

import (
	"errors"
	"fmt"
	"sync"

	"github.com/locus-project/locus/pkg/cgroupfile"
)

// Op asks for a knob of a cgroup to hold a logical value (see Spec.Validate);
// Target names one whose original is given back. They are the decision's
// own types (pkg/cgroupfile).
type (
	Op     = cgroupfile.Op
	Target = cgroupfile.Target
)

// Outcome is what happened to one Op or Target.
type Outcome string

const (
	Written   Outcome = "written"   // the file now holds the value
	Unchanged Outcome = "unchanged" // it already did; nothing was written
	Planned   Outcome = "planned"   // DryRun: it would be written
	// Unsupported: the kernel or cgroup version has no such file. Not an
	// error; report it once per node (see UnsupportedTracker).
	Unsupported Outcome = "unsupported"
	NoOriginal  Outcome = "no-original" // Restore: nothing recorded to restore
	Failed      Outcome = "failed"      // its write failed; see the returned error
	Gone        Outcome = "gone"        // its write failed because its cgroup was removed (ErrCgroupGone)
	NotRun      Outcome = "not-run"     // planned, but an earlier write failed
)

// Result reports one Op or Target, in input order.
type Result struct {
	Cgroup  string
	Knob    Knob
	Path    string // the file; "" when the version has none
	Outcome Outcome
	Before  string // file text before the batch
	After   string // file text the batch ends with (or would, under DryRun)
	Reason  string // why Unsupported or NoOriginal
}

// FileWrite is one write(2) to a cgroup file.
type FileWrite struct {
	Path  string
	Value string
}

// Report is what a batch did: per-op results and the writes in the order
// they happened (under DryRun, the order they would happen).
type Report struct {
	Results []Result
	Writes  []FileWrite
}

// Writer applies batches of knob values and records originals first.
type Writer struct {
	// DryRun plans without touching anything: no cgroup writes, no
	// directories, no originals recorded.
	DryRun bool
	// BetweenBatches, when set, runs between the batches ApplyBatches
	// writes; crash tests use it to widen the window between them.
	BetweenBatches func()

	h     *Hierarchy
	store OriginalStore
	mu    sync.Mutex
	// write, mkdirFn and rmdirFn touch the tree; tests wrap them to count
	// or refuse writes and to mimic the kernel on fixture trees.
	write   func(path, value string) error
	mkdirFn func(dir string) error
	rmdirFn func(dir string) error
}

// NewWriter returns a Writer for h that keeps originals in store.
func NewWriter(h *Hierarchy, store OriginalStore) (*Writer, error) {
	if h == nil || store == nil {
		return nil, errors.New("cgroup writer needs a hierarchy and an originals store")
	}
	return &Writer{h: h, store: store, write: h.writeFile, mkdirFn: h.mkdirCgroup, rmdirFn: h.rmdirCgroup}, nil
}

// Hierarchy is the hierarchy the Writer writes to.
func (w *Writer) Hierarchy() *Hierarchy { return w.h }

// Apply brings every op's file to its value. The whole batch is validated and
// read before the first write; files already equal are not written; writes
// of Nested and Protection knobs are ordered over the cgroup tree (PlanTree);
// originals of files about to change are recorded durably before any write.
// It stops at the first failed write and returns the report so far.
func (w *Writer) Apply(ops []Op) (Report, error) {
	r := w.ApplyBatches([]Batch{{Ops: ops}})[0]
	return r.Report, r.Err
}

// Restore writes back the recorded originals of targets, ordered like Apply,
// and forgets them once restored. Targets without a record are reported as
// NoOriginal.
func (w *Writer) Restore(targets []Target) (Report, error) {
	r := w.ApplyBatches([]Batch{{Restores: targets}})[0]
	return r.Report, r.Err
}

func writableSpec(k Knob) (*Spec, error) {
	spec, ok := Lookup(k)
	if !ok {
		return nil, fmt.Errorf("unknown cgroup knob %q", k)
	}
	if spec.ReadOnly {
		return nil, fmt.Errorf("%s is read-only: the kernel computes it", k)
	}
	return spec, nil
}

package cgroup

import (
	"errors"
	"fmt"
	"os"
)

// ErrCgroupGone says a cgroup of a batch was removed before or while the
// batch wrote it: by its owner (the kubelet tearing a pod down, a runtime
// removing a container that exited), not refused by the kernel. Nothing is
// wrong with what was asked; the caller drops the cgroup at its next look.
var ErrCgroupGone = errors.New("cgroup removed")

// GoneError is the error of a batch that failed because one of its cgroups
// no longer exists; errors.Is(err, ErrCgroupGone) and the failure it caused
// (a *WriteError with ENOENT, a missing file) both match it.
type GoneError struct {
	Cgroup string // the removed cgroup, relative to the root
	Err    error  // what failed because of it
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("cgroup %q was removed while Locus wrote it: %v", e.Cgroup, e.Err)
}

func (e *GoneError) Unwrap() []error { return []error{ErrCgroupGone, e.Err} }

// goneOf turns the error of batch b into a GoneError when one of the
// batch's cgroups no longer exists in the hierarchy of a file it names. The
// directories are looked at again, past the call's cache: the question is
// whether they are gone now, after the failure. Any failure counts: a
// cgroup going away fails a read (ENOENT), a listing of its children, or a
// write (ENOENT at open, ENODEV once the kernel has unlinked it), and
// whatever failed, a cgroup that is gone needs no retry.
func (w *Writer) goneOf(b Batch, err error) error {
	if err == nil || errors.Is(err, ErrCgroupGone) {
		return err
	}
	checked := map[string]bool{}
	gone := func(t Target) bool {
		spec, ok := Lookup(t.Knob)
		if !ok || CheckRel(t.Cgroup) != nil || t.Cgroup == "" {
			return false
		}
		pl := spec.Placement(w.h.version)
		if pl == nil {
			return false
		}
		dir, derr := w.h.Dir(pl.Controller, t.Cgroup)
		if derr != nil || checked[dir] {
			return false
		}
		checked[dir] = true
		_, serr := os.Stat(dir)
		return errors.Is(serr, os.ErrNotExist)
	}
	for _, op := range b.Ops {
		if gone(Target{Cgroup: op.Cgroup, Knob: op.Knob}) {
			return &GoneError{Cgroup: op.Cgroup, Err: err}
		}
	}
	for _, t := range b.Restores {
		if gone(t) {
			return &GoneError{Cgroup: t.Cgroup, Err: err}
		}
	}
	return err
}

// markGone reports the write that failed in a batch whose cgroup was
// removed as Gone rather than Failed.
func markGone(rep *Report) {
	for i := range rep.Results {
		if rep.Results[i].Outcome == Failed {
			rep.Results[i].Outcome = Gone
		}
	}
}

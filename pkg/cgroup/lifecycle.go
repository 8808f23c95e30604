package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNotCreated refuses to remove a cgroup Locus did not create.
var ErrNotCreated = errors.New("not created by Locus")

// v2Delegated are the controllers Locus enables for children of the cgroups it
// creates on v2, where a child only gets a controller's files if its parent's
// cgroup.subtree_control lists it.
var v2Delegated = []Controller{CPUSet, CPU, Memory}

// createdKey marks a directory Locus created in the originals store. A file's
// key never ends in "/", so marks and originals cannot collide.
func (h *Hierarchy) createdKey(dir string) string { return h.key(dir) + "/" }

// EnsureCgroup creates cgroup rel and any missing ancestors, in every managed
// v1 hierarchy or once on v2, and returns the directories it created. Each
// directory is marked as Locus's in the store (durably, before mkdir) so that
// RemoveCgroup removes only what Locus made. A new v1 cpuset gets its
// parent's cpuset.cpus and cpuset.mems, which start empty and would refuse
// every task (ENOSPC). On v2, intermediate cgroups Locus owns delegate the
// cpuset, cpu and memory controllers to their children; cgroups Locus did not
// create are never changed.
func (w *Writer) EnsureCgroup(rel string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.h.Scope()()
	if err := CheckRel(rel); err != nil {
		return nil, err
	}
	if rel == "" {
		return nil, errors.New("the root cgroup always exists; nothing to create")
	}
	var created []string
	for _, c := range w.h.hierarchies() {
		pfx := prefixes(rel)
		for i, p := range pfx {
			dir, err := w.ensureOne(c, p, i == len(pfx)-1)
			if dir != "" {
				created = append(created, dir)
			}
			if err != nil {
				return created, err
			}
		}
	}
	return created, nil
}

// ensureOne creates cgroup rel in controller c if missing (returning its
// directory) and prepares it if Locus owns it. Preparation re-runs on
// cgroups Locus already owns: a crash between mkdir and initialisation must
// not leave them unusable.
func (w *Writer) ensureOne(c Controller, rel string, leaf bool) (string, error) {
	dir, err := w.h.Dir(c, rel)
	if err != nil {
		return "", err
	}
	created := ""
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		made, err := w.mkdir(dir)
		if err != nil {
			return "", err
		}
		if made {
			created = dir
		}
	} else if err != nil {
		return "", err
	}
	if w.DryRun {
		return created, nil
	}
	if _, ours := w.store.Original(w.h.createdKey(dir)); !ours {
		return created, nil
	}
	switch {
	case w.h.version == V1 && c == CPUSet:
		err = w.initCpuset(rel)
	case w.h.version == V2 && !leaf:
		err = w.delegate(rel)
	}
	return created, err
}

// mkdir creates dir after marking it; a directory someone else created in the
// meantime is left theirs.
func (w *Writer) mkdir(dir string) (bool, error) {
	if w.DryRun {
		return true, nil
	}
	mark := w.h.createdKey(dir)
	if err := w.store.RecordOriginals(map[string]string{mark: "created"}); err != nil {
		return false, err
	}
	err := w.mkdirFn(dir)
	if errors.Is(err, fs.ErrExist) {
		return false, w.store.Forget(mark)
	}
	if err != nil {
		_ = w.store.Forget(mark)
		return false, fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	return true, nil
}

// initCpuset copies the parent's cpus and mems into a new v1 cpuset.
func (w *Writer) initCpuset(rel string) error {
	parent, _ := parentRel(rel)
	for _, name := range []string{"cpuset.cpus", "cpuset.mems"} {
		src, err := w.h.file(CPUSet, parent, name)
		if err != nil {
			return err
		}
		val, err := w.h.readFile(src)
		if err != nil {
			return err
		}
		dst, err := w.h.file(CPUSet, rel, name)
		if err != nil {
			return err
		}
		if cur, err := w.h.readFile(dst); err == nil && cur != "" {
			continue
		}
		if err := w.write(dst, val); err != nil {
			return err
		}
	}
	return nil
}

// delegate enables the available v2Delegated controllers in rel's
// cgroup.subtree_control, writing only what is missing.
func (w *Writer) delegate(rel string) error {
	read := func(name string) (map[string]bool, string, error) {
		path, err := w.h.file("", rel, name)
		if err != nil {
			return nil, "", err
		}
		text, err := w.h.readFile(path)
		set := map[string]bool{}
		for _, f := range strings.Fields(text) {
			set[f] = true
		}
		return set, path, err
	}
	avail, _, err := read("cgroup.controllers")
	if err != nil {
		return err
	}
	enabled, ctl, err := read("cgroup.subtree_control")
	if err != nil {
		return err
	}
	var add []string
	for _, c := range v2Delegated {
		if avail[string(c)] && !enabled[string(c)] {
			add = append(add, "+"+string(c))
		}
	}
	if len(add) == 0 {
		return nil
	}
	return w.write(ctl, strings.Join(add, " "))
}

// RemoveCgroupWithin is RemoveCgroup for a cgroup whose processes were
// just stopped: the kernel may count an exited process in its cgroup a
// moment after /proc shows it dead (a multi-threaded leader is a zombie
// while its other threads still exit), and rmdir meanwhile fails with
// EBUSY. It retries EBUSY every poll until within has passed, then
// returns the last error. The lock is not held between attempts.
func (w *Writer) RemoveCgroupWithin(rel string, within, poll time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := w.RemoveCgroup(rel)
		if !errors.Is(err, unix.EBUSY) || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(poll)
	}
}

// RemoveCgroup removes cgroup rel from every hierarchy where Locus created it
// and forgets its marks and originals. It refuses (ErrNotCreated) when Locus
// created it nowhere. Children and tasks must be gone first (else EBUSY).
func (w *Writer) RemoveCgroup(rel string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.h.Scope()()
	if err := CheckRel(rel); err != nil {
		return err
	}
	if rel == "" {
		return fmt.Errorf("refusing to remove the root cgroup: %w", ErrNotCreated)
	}
	found := false
	for _, c := range w.h.hierarchies() {
		dir, err := w.h.Dir(c, rel)
		if err != nil {
			return err
		}
		mark := w.h.createdKey(dir)
		if _, ours := w.store.Original(mark); !ours {
			continue
		}
		found = true
		if w.DryRun {
			continue
		}
		if err := w.rmdirFn(dir); err != nil && !errors.Is(err, unix.ENOENT) {
			hint := ""
			if errors.Is(err, unix.EBUSY) {
				hint = " (tasks or child cgroups remain)"
			}
			return fmt.Errorf("remove cgroup %s: %w%s", dir, err, hint)
		}
		w.h.forget(dir)
		keys := []string{mark}
		for _, k := range sortedKnobs() {
			spec, _ := Lookup(k)
			if pl := spec.Placement(w.h.version); pl != nil && pl.Controller == c {
				keys = append(keys, w.h.key(filepath.Join(dir, pl.File)))
			}
		}
		if err := w.store.Forget(keys...); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("refusing to remove cgroup %q: %w", rel, ErrNotCreated)
	}
	return nil
}

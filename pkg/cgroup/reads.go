package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// reads remembers, for one call of the Writer, what the items of its batches
// would otherwise look up again and again: whether a cgroup directory
// exists, a cgroup's children, and the files of the cgroups around the
// targets (a parent shared by every batch is read once). Every batch is read
// before any is written, and batches never hold each other's ancestors or
// descendants, so nothing remembered is written during the call.
type reads struct {
	h     *Hierarchy
	mu    sync.Mutex // batches are prepared in parallel; no lock is held over a read
	dirs  map[string]bool
	kids  map[string][]string
	files map[string]fileText
}

type fileText struct {
	text    string
	present bool
}

func newReads(h *Hierarchy) *reads {
	return &reads{h: h, dirs: map[string]bool{}, kids: map[string][]string{}, files: map[string]fileText{}}
}

// file reads a file around the targets; an absent file is not an error.
func (r *reads) file(path string) (fileText, error) {
	r.mu.Lock()
	f, ok := r.files[path]
	r.mu.Unlock()
	if ok {
		return f, nil
	}
	text, err := r.h.readFile(path)
	switch {
	case err == nil:
		f = fileText{text, true}
	case !errors.Is(err, fs.ErrNotExist):
		return f, err
	}
	r.mu.Lock()
	r.files[path] = f
	r.mu.Unlock()
	return f, nil
}

// isDir says whether dir is a directory: one the scope saw is (see
// ExistsInScope), others are looked at once per call.
func (r *reads) isDir(dir string) bool {
	if _, ok := r.h.knownDir(dir); ok {
		return true
	}
	r.mu.Lock()
	ok, known := r.dirs[dir]
	r.mu.Unlock()
	if !known {
		fi, err := os.Stat(dir)
		ok = err == nil && fi.IsDir()
		r.mu.Lock()
		r.dirs[dir] = ok
		r.mu.Unlock()
	}
	return ok
}

func (r *reads) children(h *Hierarchy, ctrl Controller, rel string) ([]string, error) {
	key := string(ctrl) + "\x00" + rel
	r.mu.Lock()
	kids, ok := r.kids[key]
	r.mu.Unlock()
	if ok {
		return kids, nil
	}
	kids, err := h.Children(ctrl, rel)
	if err == nil {
		r.mu.Lock()
		r.kids[key] = kids
		r.mu.Unlock()
	}
	return kids, err
}

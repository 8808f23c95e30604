package cgwatch

import (
	"errors"
	"io"
	"os"
	"slices"
)

// What the owner asks of a Watch: which directories it watches, for their
// children or only to be woken, and the listing of a watched directory.

// Parent watches path only to be woken when a directory appears in it (a
// pod's cgroup in a QoS tier's); it says whether it is watched.
func (w *Watch) Parent(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.add(path)
	return ok
}

// Children watches path and returns the names of its child directories (at
// most MaxChildren), listed when it was first watched and again after each
// event in it. ok is false when path is not watched: the children are then
// not known.
func (w *Watch) Children(path string) (names []string, ok bool) {
	w.mu.Lock()
	d, ok := w.add(path)
	if !ok {
		w.mu.Unlock()
		return nil, false
	}
	d.kids = true
	if d.listed {
		names = d.children
		w.mu.Unlock()
		return names, true
	}
	// Marked listed before the listing, with the lock released while it
	// reads: an event during the listing marks it for the next call.
	d.listed = true
	w.mu.Unlock()
	names, err := listDirs(path, w.o.MaxChildren)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		d.listed = false
		return nil, false
	}
	d.children = names
	return names, true
}

// Retain stops watching the directories for which keep is false, but for
// those adopted since the last Retain: the owner's list may have been made
// before they appeared.
func (w *Watch) Retain(keep func(path string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for path, d := range w.dirs {
		if d.adopted {
			d.adopted = false
			continue
		}
		if !keep(path) {
			delete(w.dirs, path)
			if w.fw != nil {
				_ = w.fw.Remove(path) // gone already, if the directory was removed
			}
		}
	}
}

// listDirs reads at most max entries of path and returns the names of the
// directories among them, sorted.
func listDirs(path string, max int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(max)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

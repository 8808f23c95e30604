package cgwatch

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
	names, whole, err := listDirs(path, w.o.MaxChildren)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		d.listed = false
		return nil, false
	}
	d.children, d.whole = names, whole
	w.renameKids(d)
	return names, true
}

// Exists answers from the events alone whether path exists, where the watch
// can: a directory watched for its children exists while its listing is
// current (an event since, its removal included, makes it stale until the
// next Children), and a child of one is there when that current and whole
// listing names it. known is false otherwise (neither path nor its parent
// watched for children, a listing stale after an event or events lost, or
// cut at MaxChildren): the caller looks for itself. A change is seen once
// its event has arrived; until then the answer is the one before it, so a
// caller about to write still finds a removed directory gone by its write.
// Once Run has returned nothing is known.
func (w *Watch) Exists(path string) (exists, known bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false, false
	}
	if d, ok := w.dirs[path]; ok && d.kids && d.listed {
		return true, true
	}
	if d, ok := w.dirs[filepath.Dir(path)]; ok && d.kids && d.listed && d.whole {
		_, found := slices.BinarySearch(d.children, filepath.Base(path))
		return found, true
	}
	return false, false
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
// directories among them, sorted, and whether that was every entry.
func listDirs(path string, max int) (names []string, whole bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	ents, err := f.ReadDir(max)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	whole = len(ents) < max
	if !whole {
		// Exactly max entries may still be all: one more read says.
		more, err := f.ReadDir(1)
		whole = len(more) == 0 && (err == nil || errors.Is(err, io.EOF))
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, whole, nil
}

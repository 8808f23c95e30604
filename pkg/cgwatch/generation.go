package cgwatch

import "path/filepath"

// Generation tells, from the events alone, one directory from another that
// had the same path: while it returns the same gen for a path, that path is
// the same directory it was (not removed, nor removed and made again), as
// far as the events that arrived say. It knows the directories watched for
// their children and, while such a directory's listing is current and whole,
// its children; a child made or removed gets a new generation from the event
// that names it. known is false elsewhere, and for everything once events
// were lost, until listed again, and once Run has returned: the caller then
// looks for itself (a stat).
// An identity kept while the generation holds is as good as the last event:
// a directory removed and made again at once is told apart once the events
// arrived, and a runtime names a container's cgroup after its ID, a pod's
// after its UID, so neither comes back under its old name.
func (w *Watch) Generation(path string) (gen uint64, known bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return 0, false
	}
	if d, ok := w.dirs[path]; ok && d.kids && d.listed {
		return d.gen, true
	}
	if d, ok := w.dirs[filepath.Dir(path)]; ok && d.kids && d.listed && d.whole {
		gen, ok := d.kidGen[filepath.Base(path)]
		return gen, ok
	}
	return 0, false
}

// renameKids gives each child newly listed in d a generation and forgets
// those no longer listed. Called with mu held.
func (w *Watch) renameKids(d *dir) {
	if d.kidGen == nil {
		d.kidGen = make(map[string]uint64, len(d.children))
	}
	listed := make(map[string]bool, len(d.children))
	for _, n := range d.children {
		listed[n] = true
		if _, ok := d.kidGen[n]; !ok {
			w.gens++
			d.kidGen[n] = w.gens
		}
	}
	for n := range d.kidGen {
		if !listed[n] {
			delete(d.kidGen, n)
		}
	}
}

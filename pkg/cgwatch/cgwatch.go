// Package cgwatch sees cgroup directories appear. It watches a bounded set of
// cgroup directories with inotify and wakes its owner when a child directory
// is made in one; it lists a watched directory's children again only after
// an event says they changed. It is an observation source and nothing more:
// what the children mean and what is done about them is decided elsewhere.
//
// The directories are absolute paths the caller resolved through the cgroup
// hierarchy (cgroup.Hierarchy.Dir), never built from outside text here. When
// inotify is unavailable or a watch limit is reached, Problem says so and the
// directories not watched are reported as such: the caller falls back to
// what it did without the watch.
package cgwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Bounds of a Watch.
const (
	// DefaultMaxWatches bounds the directories watched: far more than the
	// pods of a node (the kubelet's default maximum is 110).
	DefaultMaxWatches = 4096
	// DefaultMaxChildren bounds the children listed of one directory: a
	// pod's cgroup holds one directory per container and the sandbox.
	DefaultMaxChildren = 256
)

// Options configure a Watch.
type Options struct {
	MaxWatches  int // default DefaultMaxWatches
	MaxChildren int // default DefaultMaxChildren
	// Wake is called, from the watch's goroutine, when a directory appears
	// in a watched one, or when events were lost; it must not block.
	Wake func()
	// Created, when set, is called from the watch's goroutine with the
	// name of each entry made in a directory watched for its children
	// (Children), before Wake; it must not block for long: events wait
	// meanwhile. The name is the kernel's, not yet checked by anyone.
	Created func(dir, name string)
	// Adopt, when set, is asked, from the watch's goroutine, about each
	// directory made in one watched only as a Parent: when it says yes, the
	// new directory is watched for its children at once, and Created is
	// called for those already in it. A pod's cgroup the owner waits for
	// has its containers seen as they appear, not from the owner's next
	// look at it, which may come after the containers have started.
	Adopt func(path string) bool
	Log   *slog.Logger
}

// Watch watches directories for children. Its methods may be called from any
// goroutine; Run reads the events.
type Watch struct {
	o  Options
	fw *fsnotify.Watcher // nil: inotify is unavailable

	mu      sync.Mutex
	dirs    map[string]*dir // by absolute path
	problem string
	gens    uint64 // the last generation handed out
	stopped bool   // Run has returned: Exists and Generation know nothing
}

type dir struct {
	kids    bool   // watched for its children (Children), not only as a Parent
	adopted bool   // by Adopt, since the last Retain
	listed  bool   // children is current
	whole   bool   // children names every child (not cut at MaxChildren)
	gen     uint64 // this directory's generation (Generation); a new record is a new one
	// kidGen is the generation of each child listed: kept while listings
	// name it, new when an event names it (made or removed again).
	kidGen   map[string]uint64
	children []string // names of child directories, sorted
}

// New opens the inotify instance. It fails only in the sense that the
// returned Watch watches nothing (Problem says why).
func New(o Options) *Watch {
	if o.MaxWatches <= 0 {
		o.MaxWatches = DefaultMaxWatches
	}
	if o.MaxChildren <= 0 {
		o.MaxChildren = DefaultMaxChildren
	}
	if o.Wake == nil {
		o.Wake = func() {}
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	w := &Watch{o: o, dirs: map[string]*dir{}}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		w.fail(fmt.Sprintf("inotify is unavailable: %v", err))
		return w
	}
	w.fw = fw
	return w
}

// fail records the first problem and logs it once. Called with mu held or
// before the Watch is shared.
func (w *Watch) fail(msg string) {
	if w.problem != "" {
		return
	}
	w.problem = msg
	w.o.Log.Warn("cgroup watch: new container cgroups are seen from the pod status only where not watched", "problem", msg)
}

// Problem says why some directory is not watched ("" when all are).
func (w *Watch) Problem() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.problem
}

// Watched is how many directories are watched now.
func (w *Watch) Watched() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.dirs)
}

// Run reads the events until ctx ends, then closes the watch.
func (w *Watch) Run(ctx context.Context) {
	if w.fw == nil {
		return
	}
	defer w.fw.Close()
	defer func() {
		// No event is read any more: nothing is known from them.
		w.mu.Lock()
		w.stopped = true
		w.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.event(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.lost(err)
		}
	}
}

// event marks the directory an event happened in for listing again, and
// wakes the owner when a child appeared.
func (w *Watch) event(ev fsnotify.Event) {
	w.mu.Lock()
	if _, ok := w.dirs[ev.Name]; ok && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		// The watched directory itself is gone, removed or moved away
		// (inotify, or fsnotify on IN_MOVE_SELF, dropped its watch):
		// forget it, so that nothing is vouched for by a watch no longer
		// there, and one made again at the same path is watched anew.
		delete(w.dirs, ev.Name)
		w.mu.Unlock()
		return
	}
	parent := filepath.Dir(ev.Name)
	d, ok := w.dirs[parent]
	kids := false
	if ok {
		d.listed, kids = false, d.kids
		if d.kidGen != nil {
			// Made or removed: whatever has this name now is another
			// directory than the one listed.
			w.gens++
			d.kidGen[filepath.Base(ev.Name)] = w.gens
		}
	}
	w.mu.Unlock()
	if ok && ev.Has(fsnotify.Create) {
		if kids && w.o.Created != nil {
			w.o.Created(parent, filepath.Base(ev.Name))
		}
		if !kids && w.o.Adopt != nil && w.o.Adopt(ev.Name) {
			w.Adopt(ev.Name)
		}
		w.o.Wake()
	}
}

// Adopt watches path for its children, unless it is already, and tells
// Created those made before the watch was in place; it is kept by the next
// Retain whatever that is told. One made while it is listed is told twice,
// by the listing and by its event. A path that does not exist is not
// watched.
func (w *Watch) Adopt(path string) {
	w.mu.Lock()
	if d, ok := w.dirs[path]; ok && d.kids {
		w.mu.Unlock()
		return
	}
	d, ok := w.add(path)
	if !ok {
		w.mu.Unlock()
		return
	}
	d.adopted = true
	w.mu.Unlock()
	names, ok := w.Children(path)
	if !ok || w.o.Created == nil {
		return
	}
	for _, n := range names {
		w.o.Created(path, n)
	}
}

// lost handles an error of the event stream: on a queue overflow events
// were dropped, so every directory is listed again.
func (w *Watch) lost(err error) {
	w.mu.Lock()
	for _, d := range w.dirs {
		d.listed = false
	}
	w.mu.Unlock()
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		w.o.Log.Warn("cgroup watch", "err", err)
	}
	w.o.Wake()
}

// add watches path; it says whether it is watched.
func (w *Watch) add(path string) (*dir, bool) {
	if d, ok := w.dirs[path]; ok {
		return d, true
	}
	if w.fw == nil {
		return nil, false
	}
	if len(w.dirs) >= w.o.MaxWatches {
		w.fail(fmt.Sprintf("%d cgroup directories watched, the most allowed", w.o.MaxWatches))
		return nil, false
	}
	if err := w.fw.Add(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false // not made yet, or gone: no problem of the watch
		}
		// ENOSPC: the user's inotify watches are used up
		// (fs.inotify.max_user_watches).
		w.fail(fmt.Sprintf("watch %s: %v (%d watched)", path, err, len(w.dirs)))
		return nil, false
	}
	w.gens++
	d := &dir{gen: w.gens}
	w.dirs[path] = d
	return d, true
}

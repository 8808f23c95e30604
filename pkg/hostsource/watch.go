package hostsource

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// ConfigWatch tells when the HostConfig file may have changed. Its
// directory is watched, not the file: editors and ConfigMap mounts replace
// the file by renaming, which ends a watch on the file itself. But only the
// file counts: an event on its own name, or on another name after which the
// file, followed through its symlinks, is no longer the one seen before (a
// ConfigMap volume swaps its ..data symlink, and the config's own name sees
// no event). Another file of the directory changing all the time (the
// agent's own log, an editor's swap file) wakes nothing.
type ConfigWatch struct {
	w       *fsnotify.Watcher
	file    string
	changed chan struct{}
	last    fileID
}

// fileID is what tells one version of the file from another when its own
// name saw no event: a new file (a swapped symlink, a rename) has another
// inode, a file changed in place another size or time.
type fileID struct {
	missing          bool
	dev, ino         uint64
	size             int64
	mtimeNs, ctimeNs int64
}

func idOf(file string) fileID {
	fi, err := os.Stat(file)
	if err != nil {
		return fileID{missing: true}
	}
	id := fileID{size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino, id.ctimeNs = uint64(st.Dev), st.Ino, st.Ctim.Nano()
	}
	return id
}

// WatchConfig starts watching file. Close stops it.
func WatchConfig(file string) (*ConfigWatch, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch config: %w", err)
	}
	if err := w.Add(filepath.Dir(file)); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch config: %w", err)
	}
	c := &ConfigWatch{w: w, file: file, changed: make(chan struct{}, 1), last: idOf(file)}
	go c.run()
	return c, nil
}

func (c *ConfigWatch) run() {
	for ev := range c.w.Events {
		if c.concerns(ev.Name) {
			select {
			case c.changed <- struct{}{}:
			default: // one is pending already
			}
		}
	}
}

// concerns says whether an event on name may have changed the file. On the
// file's own name it always may: a rewrite of the same size within one
// timestamp tick keeps every field of its fileID.
func (c *ConfigWatch) concerns(name string) bool {
	id := idOf(c.file)
	changed := id != c.last
	c.last = id
	return changed || filepath.Base(name) == filepath.Base(c.file)
}

// Changed receives once after one or more changes of the file.
func (c *ConfigWatch) Changed() <-chan struct{} { return c.changed }

// Errors receives the watch's errors (a queue overflow, say).
func (c *ConfigWatch) Errors() <-chan error { return c.w.Errors }

// Close stops the watch.
func (c *ConfigWatch) Close() error { return c.w.Close() }

package state

import (
	"maps"
	"os"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/boundedread"
	"github.com/locus-project/locus/pkg/workload"
)

// The agent loads the checkpoint two or three times a reconcile (before
// removals, after them, under the lock to decide), and decoding a few
// hundred workloads' JSON each time was 5 % of its CPU under a churn of
// pods. A Store keeps the checkpoint it last read or wrote, with the
// identity of that version of the file, and hands out copies of it while
// the file is that version.

// fileID is one version of the checkpoint file. Every writer replaces the
// file by a rename (atomicfile), so a new version is a new inode; the size
// and the times also tell an edit in place.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// cache is the checkpoint of one version of the file.
type cache struct {
	mu      sync.Mutex
	id      fileID
	ck      Checkpoint
	ok      bool
	decoded int // how many times the file was decoded (tests)
}

func (c *cache) get(id fileID) (Checkpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || c.id != id {
		return Checkpoint{}, false
	}
	return clone(c.ck), true
}

// put keeps a copy of ck as the content of version id.
func (c *cache) put(id fileID, ck Checkpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.id, c.ck, c.ok = id, clone(ck), true
}

func (c *cache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ok = false
}

// loadCached reads the checkpoint file unless the cache holds its version.
// The identity is taken from the open file, so the bytes read are those of
// the version the cache records them under.
func (s *Store) loadCached(path string) (Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return Checkpoint{}, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Checkpoint{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	id := idOf(&st)
	if c, ok := s.cache.get(id); ok {
		return c, nil
	}
	raw, err := boundedread.Reader(f, path, maxCheckpointBytes)
	if err != nil {
		return Checkpoint{}, err
	}
	c, err := decode(raw, path)
	if err != nil {
		return Checkpoint{}, err
	}
	s.cache.mu.Lock()
	s.cache.decoded++
	s.cache.mu.Unlock()
	s.cache.put(id, c)
	return c, nil
}

// saved records c as the content of the file just written. Writers hold
// the lock (Lock) across a load, a change and this save, so the version
// found here is the one written.
func (s *Store) saved(path string, c Checkpoint) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		s.cache.drop()
		return
	}
	c.Version = FormatVersion
	s.cache.put(idOf(&st), fill(c))
}

// clone is a copy of c that shares no map, slice or pointer with it: the
// agent edits the checkpoint it loads.
func clone(c Checkpoint) Checkpoint {
	out := c
	out.Assignments = cloneMap(c.Assignments, cloneAssignment)
	out.Workloads = cloneMap(c.Workloads, func(w Workload) Workload {
		if w.Started != nil {
			p := *w.Started
			w.Started = &p
		}
		return w
	})
	out.Leases = cloneMap(c.Leases, func(l Lease) Lease {
		l.Assignment = cloneAssignment(l.Assignment)
		return l
	})
	out.QuotaRaises = maps.Clone(c.QuotaRaises) // values without references
	out.CoreIsolated = slices.Clone(c.CoreIsolated)
	return out
}

// cloneAssignment copies an assignment's slices and map; its CPU sets are
// immutable values (cpuset.CPUSet's operations return new sets).
func cloneAssignment(a workload.Assignment) workload.Assignment {
	a.MemNodes = slices.Clone(a.MemNodes)
	a.MemHeld = maps.Clone(a.MemHeld)
	a.Near = slices.Clone(a.Near)
	return a
}

func cloneMap[V any](m map[string]V, f func(V) V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

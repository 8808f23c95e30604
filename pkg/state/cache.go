package state

import (
	"bytes"
	"maps"
	"slices"
	"sync"

	"github.com/locus-project/locus/pkg/boundedread"
	"github.com/locus-project/locus/pkg/workload"
)

// The agent loads the checkpoint two or three times a reconcile (before
// removals, after them, under the lock to decide), and decoding a few
// hundred workloads' JSON each time was 5 % of its CPU under a churn of
// pods. A Store keeps the checkpoint it last read or wrote with the bytes
// of that file, and while the file holds the same bytes hands out copies
// of it instead of decoding them again. Reading the file stays: only its
// bytes say for sure that no other process replaced it (an inode number
// and coarse times can repeat).

// cache is the checkpoint a file's bytes decode to.
type cache struct {
	mu      sync.Mutex
	raw     []byte
	ck      Checkpoint
	ok      bool
	decoded int // how many times the file was decoded (tests)
}

func (c *cache) get(raw []byte) (Checkpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || !bytes.Equal(c.raw, raw) {
		return Checkpoint{}, false
	}
	return clone(c.ck), true
}

// put keeps a copy of ck as what raw decodes to.
func (c *cache) put(raw []byte, ck Checkpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw, c.ck, c.ok = raw, clone(ck), true
}

func (c *cache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw, c.ck, c.ok = nil, Checkpoint{}, false
}

// loadCached reads the checkpoint file and decodes it unless the cache
// holds what those bytes decode to.
func (s *Store) loadCached(path string) (Checkpoint, error) {
	raw, err := boundedread.File(path, maxCheckpointBytes)
	if err != nil {
		return Checkpoint{}, err
	}
	if c, ok := s.cache.get(raw); ok {
		return c, nil
	}
	c, err := decode(raw, path)
	if err != nil {
		return Checkpoint{}, err
	}
	s.cache.mu.Lock()
	s.cache.decoded++
	s.cache.mu.Unlock()
	s.cache.put(raw, c)
	return c, nil
}

// saved records c as what raw, just written, decodes to.
func (s *Store) saved(raw []byte, c Checkpoint) {
	c.Version = FormatVersion
	s.cache.put(raw, fill(c))
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
	out.MemsFollowing = cloneMap(c.MemsFollowing, func(f workload.MemsFollowing) workload.MemsFollowing {
		f.Wide = slices.Clone(f.Wide)
		return f
	})
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

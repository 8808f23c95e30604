package cgroup

import (
	"fmt"
	"maps"
)

// Covered is the FileStore as an OriginalStore whose records of cpuset
// files below a ChildrenFromParent mark are kept in memory at once and
// reach the disk with the store's next save (any durable change, or
// Flush), not before the write they precede; every other record is
// durable before RecordOriginals returns, as the interface asks.
//
// A crash in between loses nothing: the mark, durable before the first
// such write, gives those files their parent's original back. It is the
// store of a path that must write a new container's cpuset before the
// container's first instruction (pkg/kube/earlypin), where a save of the
// whole file per container, under a burst of pods, came too late.
func (s *FileStore) Covered(v Version) OriginalStore { return covered{s, v} }

type covered struct {
	*FileStore
	v Version
}

func (c covered) RecordOriginals(values map[string]string) error {
	durable := map[string]string{}
	c.mu.Lock()
	for k, val := range values {
		if _, ok := c.data[k]; ok {
			continue
		}
		if c.coveredKey(k) {
			c.data[k] = val
			c.unsaved = append(c.unsaved, k)
		} else {
			durable[k] = val
		}
	}
	c.mu.Unlock()
	if len(durable) == 0 {
		return nil
	}
	return c.FileStore.RecordOriginals(durable)
}

// coveredKey: key is a cpuset file of a cgroup below a ChildrenFromParent
// mark. Called with mu held.
func (c covered) coveredKey(key string) bool {
	_, cg, knob, ok := ParseOriginalKey(c.v, key)
	if !ok || (knob != CPUSetCPUs && knob != CPUSetMems) {
		return false
	}
	return c.markLocked(cg) == ChildrenFromParent
}

// Flush makes the records Covered kept in memory durable; without any it
// writes nothing.
func (s *FileStore) Flush() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	if len(s.unsaved) == 0 {
		s.mu.Unlock()
		return nil
	}
	data, marks, n := maps.Clone(s.data), s.marks, len(s.unsaved)
	s.mu.Unlock()
	if err := s.save(data, marks); err != nil {
		return fmt.Errorf("originals checkpoint %s: %w", s.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved(n)
	return nil
}

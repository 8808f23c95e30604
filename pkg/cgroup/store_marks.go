package cgroup

import (
	"fmt"
	"maps"
)

// The marks of a FileStore: which cgroups Locus created, and which take
// their containers' originals from the pod's (ChildrenFromParent), saved
// with the originals.

// SetMark marks cgroups (NoMark clears them), durably.
func (s *FileStore) SetMark(m Mark, rels ...string) error {
	return s.setMarks(m, rels, true)
}

// MarkUnmarked marks, durably, those of rels that carry no mark of their
// own: a cgroup marked otherwise keeps what it says.
func (s *FileStore) MarkUnmarked(m Mark, rels ...string) error {
	return s.setMarks(m, rels, false)
}

func (s *FileStore) setMarks(m Mark, rels []string, overwrite bool) error {
	if len(rels) == 0 {
		return nil // the Pinner asks every reconcile, mostly for no pod
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	next := maps.Clone(s.marks)
	for _, rel := range rels {
		if _, marked := next[rel]; marked && !overwrite {
			continue
		}
		if m == NoMark {
			delete(next, rel)
		} else {
			next[rel] = m
		}
	}
	if maps.Equal(next, s.marks) {
		s.mu.Unlock()
		return nil
	}
	data, n := maps.Clone(s.data), len(s.unsaved)
	s.mu.Unlock()
	if err := s.save(data, next); err != nil {
		return fmt.Errorf("originals checkpoint %s: %w", s.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks = next
	s.saved(n)
	return nil
}

// CgroupMark returns the mark of rel or of its nearest marked ancestor; a
// ChildrenFromParent mark covers only the cgroups below its own.
func (s *FileStore) CgroupMark(rel string) Mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.markLocked(rel)
}

func (s *FileStore) markLocked(rel string) Mark {
	for p, ok := rel, true; ok; p, ok = parentRel(p) {
		if m, found := s.marks[p]; found && (m != ChildrenFromParent || p != rel) {
			return m
		}
	}
	return NoMark
}

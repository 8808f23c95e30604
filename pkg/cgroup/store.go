package cgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/locus-project/locus/pkg/atomicfile"
)

// OriginalStore keeps the value each cgroup file had before Locus first
// changed it, and marks the cgroups Locus created, so both can be undone.
// Keys are paths relative to the cgroup root.
type OriginalStore interface {
	// Original returns the recorded value of key. A Writer may call it
	// from several goroutines at once.
	Original(key string) (string, bool)
	// RecordOriginals records values for keys not recorded yet; a key's first
	// value is kept forever because only it is the true original. The
	// values must be durable when it returns: a cgroup write follows.
	RecordOriginals(values map[string]string) error
	// Forget drops keys once their originals are restored or gone.
	Forget(keys ...string) error
}

// MemoryStore is an OriginalStore that lives only as long as the process.
type MemoryStore struct {
	mu   sync.Mutex
	data map[string]string
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{data: map[string]string{}} }

func (m *MemoryStore) Original(key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.data[key]
	return v, ok
}

func (m *MemoryStore) RecordOriginals(values map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range values {
		if _, ok := m.data[k]; !ok {
			m.data[k] = v
		}
	}
	return nil
}

func (m *MemoryStore) Forget(keys ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.data, k)
	}
	return nil
}

// Keys lists the recorded keys, sorted.
func (m *MemoryStore) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedKeys(m.data)
}

// storeFormat tags the checkpoint file so a future layout is told apart.
const storeFormat = "locus-cgroup-originals/v1"

type storeFile struct {
	Format    string            `json:"format"`
	Originals map[string]string `json:"originals"`
}

// FileStore is an OriginalStore in one JSON file, replaced atomically on every
// change: write a temp file in the same directory, fsync it, rename it over
// the old one, fsync the directory. A crash leaves either the old or the new
// file, never a torn one, so no backup copy is kept; a checkpoint that still
// fails to parse (disk damage, hand edits) is refused rather than guessed at,
// because it holds the only record of values to restore.
type FileStore struct {
	mu   sync.Mutex
	path string
	data map[string]string
}

// OpenFileStore loads path (a missing file is an empty store), creating its
// directory if needed and deleting temp files a crash left behind.
func OpenFileStore(path string) (*FileStore, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("originals checkpoint: %w", err)
	}
	stale, _ := filepath.Glob(filepath.Join(dir, tempPrefix(path)+"*"))
	for _, s := range stale {
		_ = os.Remove(s)
	}
	s := &FileStore{path: path, data: map[string]string{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("originals checkpoint: %w", err)
	}
	var f storeFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("originals checkpoint %s is corrupt (%v); it records the values "+
			"cgroup files must be restored to, so inspect or remove it by hand", path, err)
	}
	if f.Format != storeFormat {
		return nil, fmt.Errorf("originals checkpoint %s: format %q, want %q", path, f.Format, storeFormat)
	}
	if f.Originals != nil {
		s.data = f.Originals
	}
	return s, nil
}

func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

func (s *FileStore) Original(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}

func (s *FileStore) RecordOriginals(values map[string]string) error {
	return s.update(func(next map[string]string) bool {
		changed := false
		for k, v := range values {
			if _, ok := next[k]; !ok {
				next[k], changed = v, true
			}
		}
		return changed
	})
}

func (s *FileStore) Forget(keys ...string) error {
	return s.update(func(next map[string]string) bool {
		changed := false
		for _, k := range keys {
			if _, ok := next[k]; ok {
				delete(next, k)
				changed = true
			}
		}
		return changed
	})
}

// Keys lists the recorded keys, sorted.
func (s *FileStore) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.data)
}

// update applies change to a copy and commits it to memory only once it is on
// disk, so memory never claims what a crash would lose.
func (s *FileStore) update(change func(map[string]string) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]string, len(s.data)+1)
	for k, v := range s.data {
		next[k] = v
	}
	if !change(next) {
		return nil
	}
	if err := s.save(next); err != nil {
		return fmt.Errorf("originals checkpoint %s: %w", s.path, err)
	}
	s.data = next
	return nil
}

func (s *FileStore) save(data map[string]string) error {
	raw, err := json.MarshalIndent(storeFile{Format: storeFormat, Originals: data}, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.path, append(raw, '\n'), 0o600)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

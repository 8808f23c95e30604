package cgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

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
	return slices.Sorted(maps.Keys(m.data))
}

// storeFormat tags the checkpoint file so a future layout is told apart.
const storeFormat = "locus-cgroup-originals/v1"

// storeFile is the file's layout, which appendStoreFile writes: a field
// added here is added there (TestStoreEncodingIsEncodingJSONs compares them).
type storeFile struct {
	Format    string            `json:"format"`
	Originals map[string]string `json:"originals"`
	// Marks (see Mark) outlive restarts: a cgroup whose originals were lost
	// stays marked until the agent lets it go.
	Marks map[string]Mark `json:"marks,omitempty"`
}

// FileStore is an OriginalStore in one JSON file, replaced atomically on every
// change: write a temp file in the same directory, fsync it, rename it over
// the old one, fsync the directory. A crash leaves either the old or the new
// file, never a torn one, so no backup copy is kept. A checkpoint that still
// fails to parse (disk damage, hand edits) is not guessed at: it is set
// aside for inspection and the store starts empty, reporting the damage
// (Damage), so that the agent can mark what it no longer knows.
//
// The disk is written with saveMu held, not mu: a record Covered keeps in
// memory, or a read, never waits for an fsync, which takes seconds on a node
// starting a burst of pods.
type FileStore struct {
	saveMu  sync.Mutex // held across each save, in order
	mu      sync.Mutex // guards what follows
	path    string
	data    map[string]string
	marks   map[string]Mark
	existed bool   // the file was there when opened
	damage  string // why the file found was set aside; "" if it was fine
	// unsaved are the keys of data Covered recorded that are not on disk
	// yet, in the order recorded.
	unsaved []string
	// beforeWrite, when set (tests), runs as a save begins to write.
	beforeWrite func()
	// encoded is the last save's text; its memory is reused by the next
	// save (saveMu held): the file is rewritten whole at every record,
	// and json.Marshal's copy of the text each time was 3 % of the bytes
	// the agent allocated under a 300-pod churn.
	encoded []byte
	keys    []string // appendStoreFile's scratch
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
	s := &FileStore{path: path, data: map[string]string{}, marks: map[string]Mark{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Written at once, so that a file missing later means it was lost.
		if err := s.save(s.data, s.marks); err != nil {
			return nil, fmt.Errorf("originals checkpoint %s: %w", path, err)
		}
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("originals checkpoint: %w", err)
	}
	s.existed = true
	var f storeFile
	if err := json.Unmarshal(raw, &f); err != nil {
		aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().Unix())
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("originals checkpoint %s is corrupt (%v) and cannot be set aside: %w", path, err, rerr)
		}
		s.damage = fmt.Sprintf("%s was corrupt (%v); set aside as %s", path, err, aside)
		return s, s.save(s.data, s.marks)
	}
	if f.Format != storeFormat {
		return nil, fmt.Errorf("originals checkpoint %s: format %q, want %q", path, f.Format, storeFormat)
	}
	if f.Originals != nil {
		s.data = f.Originals
	}
	if f.Marks != nil {
		s.marks = f.Marks
	}
	return s, nil
}

// ReadFileStore loads a FileStore's file into memory without touching its
// directory, for a dry run (OpenFileStore would create the directory and
// tidy it). A missing file is an empty store.
func ReadFileStore(path string) (OriginalStore, error) {
	s := NewMemoryStore()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Originals map[string]string `json:"originals"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, s.RecordOriginals(f.Originals)
}

// Existed reports whether the file was there when the store was opened.
func (s *FileStore) Existed() bool { return s.existed }

// Damage says why the file found at open was set aside; "" if it was fine.
func (s *FileStore) Damage() string { return s.damage }

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
	return slices.Sorted(maps.Keys(s.data))
}

// update applies change to a copy and commits it to memory only once it is on
// disk, so memory never claims what a crash would lose.
func (s *FileStore) update(change func(map[string]string) bool) error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	next, marks, n := maps.Clone(s.data), s.marks, len(s.unsaved)
	s.mu.Unlock()
	if !change(next) {
		return nil
	}
	if err := s.save(next, marks); err != nil {
		return fmt.Errorf("originals checkpoint %s: %w", s.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.unsaved[n:] { // recorded by Covered meanwhile
		next[k] = s.data[k]
	}
	s.data = next
	s.saved(n)
	return nil
}

// saved drops the first n unsaved keys, now on disk. Called with mu held.
func (s *FileStore) saved(n int) {
	s.unsaved = append(s.unsaved[:0], s.unsaved[n:]...)
}

// save writes compact JSON on one line: the file is rewritten whole at every
// record, and indenting thousands of keys cost more than encoding them.
func (s *FileStore) save(data map[string]string, marks map[string]Mark) error {
	s.encoded = appendStoreFile(s.encoded[:0], &s.keys, data, marks)
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	return atomicfile.Write(s.path, s.encoded, 0o600)
}

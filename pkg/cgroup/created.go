package cgroup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/atomicfile"
)

// Created is the store a Writer records in: the originals (a FileStore),
// and, in a file of their own, the marks of the cgroup directories Locus
// created (the keys ending in "/" that the Writer records before each mkdir
// and forgets after each rmdir). Those marks are what lets RemoveCgroup
// remove a cgroup; kept only in the originals file, they would go with it,
// and a workload removed after that would leave every cgroup Locus made for
// it behind. Opened on an originals store whose file was lost or set aside
// as damaged, Created puts its marks back into it.
type Created struct {
	*FileStore
	mu   sync.Mutex // held across each save, so saves land in order
	path string
	dirs map[string]bool
}

// createdFormat tags the file so a future layout is told apart.
const createdFormat = "locus-cgroup-created/v1"

// The file is Locus's own, but read as any file: bounded before it is
// kept. A node has a few directories per standalone workload.
const (
	maxCreatedBytes = 1 << 20
	maxCreatedDirs  = 1 << 14
)

type createdFile struct {
	Format string   `json:"format"`
	Dirs   []string `json:"dirs"`
}

// OpenCreated opens the record at path in front of originals. A missing
// record (a first start, or an agent that kept its marks in the originals
// only) starts from the marks originals holds; a damaged one is set aside
// (path.corrupt-TIME) and starts likewise. When originals was not there
// when opened, or was damaged, the record's marks are put back into it.
func OpenCreated(path string, originals *FileStore) (*Created, error) {
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	for _, s := range stale {
		_ = os.Remove(s)
	}
	c := &Created{FileStore: originals, path: path, dirs: map[string]bool{}}
	dirs, err := readCreated(path)
	switch {
	case errors.Is(err, errCreatedDamaged):
		aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().Unix())
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("%w, and it cannot be set aside: %w", err, rerr)
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("record of the cgroups Locus created: %w", err)
	}
	for _, d := range dirs {
		c.dirs[d] = true
	}
	lost := map[string]string{}
	if !originals.Existed() || originals.Damage() != "" {
		for d := range c.dirs {
			lost[d] = "created"
		}
	}
	for _, key := range originals.Keys() {
		if strings.HasSuffix(key, "/") {
			c.dirs[key] = true
		}
	}
	if err := originals.RecordOriginals(lost); err != nil {
		return nil, err
	}
	if !slices.Equal(dirs, c.sorted()) {
		return c, c.save()
	}
	return c, nil
}

// readCreated reads and checks the record: every entry must be a creation
// mark of a clean relative path.
func readCreated(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxCreatedBytes+1))
	if err != nil {
		return nil, err
	}
	return parseCreated(path, raw)
}

// errCreatedDamaged is in the error of a record that cannot be read as one.
var errCreatedDamaged = errors.New("damaged")

func parseCreated(path string, raw []byte) ([]string, error) {
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("%s is %w: %s", path, errCreatedDamaged, fmt.Sprintf(format, args...))
	}
	if len(raw) > maxCreatedBytes {
		return nil, damaged("larger than %d MiB", maxCreatedBytes>>20)
	}
	f, err := decodeCreated(raw)
	if err != nil {
		return nil, damaged("%v", err)
	}
	if f.Format != createdFormat {
		return nil, damaged("format %.64q, want %q", f.Format, createdFormat)
	}
	for i, d := range f.Dirs {
		rel, ok := strings.CutSuffix(d, "/")
		if !ok || rel == "" || CheckRel(rel) != nil {
			return nil, damaged("dirs[%d]: %.64q is not a cgroup directory's mark (a relative path ending in /)", i, d)
		}
	}
	slices.Sort(f.Dirs)
	return slices.Compact(f.Dirs), nil
}

// decodeCreated decodes the record one token at a time, so that the count
// of dirs is refused before a list of that size is made.
func decodeCreated(raw []byte) (createdFile, error) {
	var f createdFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return f, fmt.Errorf("not a JSON object (%v)", err)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return f, err
		}
		switch t {
		case "format":
			if err := dec.Decode(&f.Format); err != nil {
				return f, fmt.Errorf("format: %w", err)
			}
		case "dirs":
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return f, fmt.Errorf("dirs: not a list (%v)", err)
			}
			for dec.More() {
				if len(f.Dirs) == maxCreatedDirs {
					return f, fmt.Errorf("dirs: more than %d entries", maxCreatedDirs)
				}
				var d string
				if err := dec.Decode(&d); err != nil {
					return f, fmt.Errorf("dirs[%d]: %w", len(f.Dirs), err)
				}
				f.Dirs = append(f.Dirs, d)
			}
			if _, err := dec.Token(); err != nil {
				return f, err
			}
		default:
			return f, fmt.Errorf("unknown field %.64q", t)
		}
	}
	if _, err := dec.Token(); err != nil {
		return f, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return f, errors.New("data after the object")
	}
	return f, nil
}

// RecordOriginals records the creation marks among values in the record
// first, durably, then everything in the originals.
func (c *Created) RecordOriginals(values map[string]string) error {
	if err := c.change(values, nil); err != nil {
		return err
	}
	return c.FileStore.RecordOriginals(values)
}

// Forget drops the creation marks among keys from the record first, then
// everything from the originals: a crash between the two leaves a mark in
// the originals alone, as before the record existed.
func (c *Created) Forget(keys ...string) error {
	if err := c.change(nil, keys); err != nil {
		return err
	}
	return c.FileStore.Forget(keys...)
}

// change adds the marks among add's keys and drops those in drop, and
// saves the record when that changed it.
func (c *Created) change(add map[string]string, drop []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := false
	for key := range add {
		if strings.HasSuffix(key, "/") && !c.dirs[key] {
			c.dirs[key], changed = true, true
		}
	}
	for _, key := range drop {
		if c.dirs[key] {
			delete(c.dirs, key)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return c.save()
}

func (c *Created) sorted() []string {
	out := make([]string, 0, len(c.dirs))
	for d := range c.dirs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func (c *Created) save() error {
	raw, err := json.Marshal(createdFile{Format: createdFormat, Dirs: c.sorted()}) // compact, as originals.json
	if err != nil {
		return err
	}
	if err := atomicfile.Write(c.path, append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("record of the cgroups Locus created: %w", err)
	}
	return nil
}

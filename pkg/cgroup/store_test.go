package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileStoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "originals.json")
	s, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordOriginals(map[string]string{"cpuset/a/cpuset.cpus": "0-3", "memory/a/memory.min": "0"}); err != nil {
		t.Fatal(err)
	}
	// First value wins: a later record of the same key is not the original.
	if err := s.RecordOriginals(map[string]string{"cpuset/a/cpuset.cpus": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget("memory/a/memory.min"); err != nil {
		t.Fatal(err)
	}
	again, err := OpenFileStore(path) // a fresh process sees what was made durable
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := again.Original("cpuset/a/cpuset.cpus"); !ok || v != "0-3" {
		t.Errorf("reloaded original = %q,%v; want 0-3", v, ok)
	}
	if _, ok := again.Original("memory/a/memory.min"); ok {
		t.Error("forgotten key came back")
	}
	if got := strings.Join(again.Keys(), ","); got != "cpuset/a/cpuset.cpus" {
		t.Errorf("Keys = %s", got)
	}
}

func TestFileStoreMissingIsEmpty(t *testing.T) {
	s, err := OpenFileStore(filepath.Join(t.TempDir(), "none.json"))
	if err != nil || len(s.Keys()) != 0 {
		t.Fatalf("missing file: %v, %v", s, err)
	}
}

// TestFileStoreTornTemp simulates a crash in the middle of a save: the temp
// file is half written and never renamed. Loading must return the last good
// state and clear the leftover.
func TestFileStoreTornTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "originals.json")
	s, _ := OpenFileStore(path)
	if err := s.RecordOriginals(map[string]string{"k": "good"}); err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(dir, tempPrefix(path)+"12345")
	if err := os.WriteFile(torn, []byte(`{"format":"locus-cgroup-originals/v1","originals":{"k":"ba`), 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := again.Original("k"); v != "good" {
		t.Errorf("after a torn save, k = %q; want the previous good value", v)
	}
	if _, err := os.Stat(torn); !os.IsNotExist(err) {
		t.Error("leftover temp file not removed")
	}
}

func TestFileStoreCorruptRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "originals.json")
	for _, content := range []string{`{"format":"locus-cgroup-originals/v1","originals":{"k":`, `{"format":"other"}`} {
		os.WriteFile(path, []byte(content), 0o600)
		_, err := OpenFileStore(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("content %q: err = %v, want an error naming %s", content, err, path)
		}
	}
}

// TestFileStoreFailedSaveKeepsMemoryHonest: when the disk refuses a save,
// the store must not pretend the value is recorded.
func TestFileStoreFailedSaveKeepsMemoryHonest(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores directory permissions; use a path whose directory vanishes.
		dir := t.TempDir()
		path := filepath.Join(dir, "sub", "originals.json")
		s, err := OpenFileStore(path)
		if err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(dir, "sub"))
		if err := s.RecordOriginals(map[string]string{"k": "v"}); err == nil {
			t.Fatal("save into a removed directory succeeded")
		}
		if _, ok := s.Original("k"); ok {
			t.Error("a value that never reached disk is reported as recorded")
		}
		return
	}
	dir := t.TempDir()
	s, _ := OpenFileStore(filepath.Join(dir, "originals.json"))
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if err := s.RecordOriginals(map[string]string{"k": "v"}); err == nil {
		t.Fatal("save into a read-only directory succeeded")
	}
	if _, ok := s.Original("k"); ok {
		t.Error("a value that never reached disk is reported as recorded")
	}
}

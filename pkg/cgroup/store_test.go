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
	// Compact, one line: the file is rewritten whole at every record.
	if raw, err := os.ReadFile(path); err != nil || strings.Count(string(raw), "\n") != 1 || strings.Contains(string(raw), "\n ") {
		t.Errorf("originals.json is not compact JSON on one line (%v):\n%s", err, raw)
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

// TestFileStoreCorruptSetAside: a checkpoint that does not parse is kept
// aside for inspection and the store starts empty, saying so; one of
// another format (a newer agent's) is refused, not guessed at.
func TestFileStoreCorruptSetAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "originals.json")
	torn := `{"format":"locus-cgroup-originals/v1","originals":{"k":`
	os.WriteFile(path, []byte(torn), 0o600)
	s, err := OpenFileStore(path)
	if err != nil {
		t.Fatalf("a corrupt checkpoint stopped the store: %v", err)
	}
	if len(s.Keys()) != 0 || !strings.Contains(s.Damage(), path) {
		t.Errorf("keys %v, damage %q", s.Keys(), s.Damage())
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("corrupt file not set aside: %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); string(b) != torn {
		t.Errorf("the file set aside holds %q", b)
	}
	os.WriteFile(path, []byte(`{"format":"other"}`), 0o600)
	if _, err := OpenFileStore(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("another format: err = %v, want an error naming %s", err, path)
	}
}

// TestFileStoreMarks: marks cover a cgroup and those below it, and survive
// a reopen.
func TestFileStoreMarks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "originals.json")
	s, _ := OpenFileStore(path)
	if s.Existed() {
		t.Error("a new store claims its file existed")
	}
	if err := s.SetMark(FromDefaults, "pods/a"); err != nil {
		t.Fatal(err)
	}
	again, _ := OpenFileStore(path)
	if !again.Existed() || again.CgroupMark("pods/a/c") != FromDefaults || again.CgroupMark("pods/b") != NoMark {
		t.Errorf("marks after reopen: pods/a/c %q, pods/b %q", again.CgroupMark("pods/a/c"), again.CgroupMark("pods/b"))
	}
	again.SetMark(NoMark, "pods/a")
	if again.CgroupMark("pods/a") != NoMark {
		t.Error("mark not cleared")
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

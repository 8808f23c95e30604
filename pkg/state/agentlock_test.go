package state

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecondAgentRefused keeps the lock held by a live agent: a second one
// is refused with an error naming the holder and the state directory.
func TestSecondAgentRefused(t *testing.T) {
	old := lockWait
	lockWait = 100 * time.Millisecond
	defer func() { lockWait = old }()
	dir := t.TempDir()
	first, err := LockAgent(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = LockAgent(dir)
	if err == nil || !strings.Contains(err.Error(), "another locus agent (pid ") || !strings.Contains(err.Error(), "state dir "+dir+" ") {
		t.Fatalf("second lock: %v", err)
	}
}

// Running reads /proc/locks: a state directory without a lock file has
// never had an agent, one whose lock is held has one, and one whose lock
// was let go has none.
func TestRunning(t *testing.T) {
	dir := t.TempDir()
	if running, err := Running(dir); err != nil || running {
		t.Fatalf("no lock file: running %v, %v", running, err)
	}
	lock, err := LockAgent(dir)
	if err != nil {
		t.Fatal(err)
	}
	if running, err := Running(dir); err != nil || !running {
		t.Fatalf("lock held: running %v, %v", running, err)
	}
	lock.Close()
	if running, err := Running(dir); err != nil || running {
		t.Fatalf("lock let go: running %v, %v", running, err)
	}
}

func TestLoadRecord(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	load := RecordLoader(log, dir)
	var v map[string]int
	if load("r.json", "runs", &v) || logs.Len() != 0 {
		t.Fatalf("a missing record loaded, or was logged: %q", logs.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "r.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if load("r.json", "runs", &v) || !strings.Contains(logs.String(), "runs: ignoring them") {
		t.Fatalf("a damaged record loaded, or was not logged: %q", logs.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "r.json"), []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if !load("r.json", "runs", &v) || v["a"] != 1 {
		t.Fatalf("the record did not load: %v", v)
	}
}

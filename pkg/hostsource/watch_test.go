package hostsource

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The watch wakes for the file's own changes (a rewrite of the same size
// included, which may keep its times within one tick, and its removal),
// and not for the other files of its directory.
func TestConfigWatchOnlyTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "host.yaml")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("host.yaml", "a")
	w, err := WatchConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	woken := func() bool {
		select {
		case <-w.Changed():
			return true
		case <-time.After(300 * time.Millisecond):
			return false
		}
	}
	for i, step := range []struct {
		what string
		do   func()
		want bool
	}{
		{"another file written", func() { write("agent.log", "x") }, false},
		{"another file removed", func() { os.Remove(filepath.Join(dir, "agent.log")) }, false},
		{"the file rewritten, same size", func() { write("host.yaml", "b") }, true},
		{"a directory made beside it", func() { os.Mkdir(filepath.Join(dir, "state"), 0o755) }, false},
		{"the file removed", func() { os.Remove(file) }, true},
		{"the file back", func() { write("host.yaml", "c") }, true},
	} {
		step.do()
		if got := woken(); got != step.want {
			t.Errorf("step %d, %s: woken %v, want %v", i, step.what, got, step.want)
		}
		// One write is several events on the file's name (truncate,
		// write); a late one wakes the watch again after the first wake
		// was taken. Those belong to this step, not the next.
		for step.want && woken() {
		}
	}
}

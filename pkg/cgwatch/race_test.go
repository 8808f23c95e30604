package cgwatch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// A directory removed while its watch is dropped (a pod deleted as Retain
// lets its cgroup go) must not crash the watcher: fsnotify 1.7 could
// read a watch another goroutine had just removed and panic on its own
// goroutine, taking the agent down with it (seen under a 300-pod churn).
func TestRemoveRacingDeleteSelf(t *testing.T) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()
	go func() {
		for range fw.Events {
		}
	}()
	go func() {
		for range fw.Errors {
		}
	}()
	root := t.TempDir()
	for i := range 3000 {
		d := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fw.Add(d); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
		_ = fw.Remove(d) // as the kernel's IN_DELETE_SELF is read
	}
}

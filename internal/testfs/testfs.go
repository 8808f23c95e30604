// Package testfs writes the fixture trees tests read (sysfs, procfs and
// cgroup files in a temporary directory).
package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes text to path, making its parent directories, or ends the
// test.
func Write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

package topology

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneListParser: every CPU or node list from outside goes through
// ParseCPUList or ParseNodeList. k8s.io/utils/cpuset.Parse inserts every id
// of a range ("0-9223372036854775807" never returns), so no code of the
// module calls it; tests may, to compare.
func TestOneListParser(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || path == filepath.Join(root, "bench")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(raw), "cpuset.Parse(") {
			t.Errorf("%s calls cpuset.Parse: use topology.ParseCPUList", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

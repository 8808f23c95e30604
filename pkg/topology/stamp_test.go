package topology_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
)

// The stamp changes when one of the files that say the topology changed
// does, and reads a missing one as empty.
func TestStamp(t *testing.T) {
	root := t.TempDir()
	before := topology.Stamp(root)
	for _, f := range topology.ChangeFiles {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("0-3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if now := topology.Stamp(root); now == before {
			t.Fatalf("stamp unchanged after writing %s", f)
		} else {
			before = now
		}
	}
	if topology.Stamp(root) != before {
		t.Fatal("stamp changed with no file changed")
	}
}

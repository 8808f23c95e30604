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

// A PCI function hot-plugged or removed changes the stamp, so the agent
// discovers its devices again.
func TestStampFollowsPCIHotplug(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, topology.PCIDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	before := topology.Stamp(root)
	gpu := filepath.Join(dir, "0000:af:00.0")
	if err := os.Mkdir(gpu, 0o755); err != nil {
		t.Fatal(err)
	}
	plugged := topology.Stamp(root)
	if plugged == before {
		t.Fatal("stamp unchanged after a device appeared")
	}
	if err := os.Remove(gpu); err != nil {
		t.Fatal(err)
	}
	if topology.Stamp(root) != before {
		t.Fatal("stamp not back after the device left")
	}
}

package topology

import (
	"os"
	"path/filepath"
	"strings"
)

// ChangeFiles change whenever the topology Discover finds does, as far as
// the decision uses it: CPUs and nodes going on- or offline, isolated CPUs,
// nodes gaining memory.
var ChangeFiles = []string{"devices/system/cpu/online", "devices/system/cpu/isolated",
	"devices/system/node/online", "devices/system/node/has_memory"}

// PCIDir is where the PCI functions are listed; a function hot-plugged or
// removed adds or drops its entry, and so changes the stamp.
const PCIDir = "bus/pci/devices"

// Stamp is the text of ChangeFiles under sysfsRoot (a missing one reads
// empty) and the names under PCIDir (at most MaxPCIDevices+1 read, in the
// directory's order): while it stays the same, so does the topology, and a
// caller need not discover it again (four small files and one directory
// instead of the whole CPU and PCI trees).
func Stamp(sysfsRoot string) string {
	var sb strings.Builder
	for _, f := range ChangeFiles {
		raw, _ := os.ReadFile(filepath.Join(sysfsRoot, f))
		sb.Write(raw)
		sb.WriteByte(0)
	}
	if d, err := os.Open(filepath.Join(sysfsRoot, PCIDir)); err == nil {
		names, _ := d.Readdirnames(MaxPCIDevices + 1)
		d.Close()
		for _, n := range names {
			sb.WriteString(n[:min(len(n), 64)])
			sb.WriteByte(',')
		}
	}
	return sb.String()
}

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

// Stamp is the text of ChangeFiles under sysfsRoot (a missing one reads
// empty): while it stays the same, so does the topology, and a caller need
// not discover it again (four small files instead of the whole CPU tree).
func Stamp(sysfsRoot string) string {
	var sb strings.Builder
	for _, f := range ChangeFiles {
		raw, _ := os.ReadFile(filepath.Join(sysfsRoot, f))
		sb.Write(raw)
		sb.WriteByte(0)
	}
	return sb.String()
}

package locality

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// NodeMemory is the size and the free memory of one NUMA node, in bytes.
type NodeMemory struct {
	Total, Free uint64
}

// ParseNodeMeminfo reads MemTotal and MemFree from the text of
// /sys/devices/system/node/nodeN/meminfo ("Node 0 MemFree:   6561884 kB").
func ParseNodeMeminfo(text string) (NodeMemory, error) {
	var m NodeMemory
	var haveTotal, haveFree bool
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "Node" || (f[2] != "MemTotal:" && f[2] != "MemFree:") {
			continue
		}
		kb, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil || len(f) != 5 || f[4] != "kB" || kb > 1<<53 {
			return NodeMemory{}, fmt.Errorf("malformed line %s", topology.Quote(strings.TrimSpace(line)))
		}
		if f[2] == "MemTotal:" {
			m.Total, haveTotal = kb*1024, true
		} else {
			m.Free, haveFree = kb*1024, true
		}
	}
	if !haveTotal || !haveFree {
		return NodeMemory{}, fmt.Errorf("want both MemTotal and MemFree lines")
	}
	return m, nil
}

// ReadNodeMemory reads the size and free memory of each listed node from
// sysfs now (free memory changes by the second, so it is never cached).
func ReadNodeMemory(sysfsRoot string, nodes []int) (map[int]NodeMemory, error) {
	if sysfsRoot == "" {
		sysfsRoot = "/sys"
	}
	out := make(map[int]NodeMemory, len(nodes))
	for _, id := range nodes {
		path := filepath.Join(sysfsRoot, "devices/system/node", fmt.Sprintf("node%d", id), "meminfo")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		m, err := ParseNodeMeminfo(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[id] = m
	}
	return out, nil
}

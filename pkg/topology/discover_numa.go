package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/boundedread"
)

func discoverNodes(nodeDir string, online cpuset.CPUSet) ([]NUMANode, error) {
	if _, err := os.Stat(nodeDir); errors.Is(err, fs.ErrNotExist) {
		return []NUMANode{{ID: 0, CPUs: online.Clone(), Distances: []int{10}}}, nil
	}
	onlineNodes, err := readList(filepath.Join(nodeDir, "online"))
	if err != nil {
		return nil, err
	}
	// has_memory lets us drop nodes with neither CPUs nor memory (hot-plug
	// placeholders); kernels without it keep every online node.
	withMemory, knowMemory, err := readOptionalList(filepath.Join(nodeDir, "has_memory"))
	if err != nil {
		return nil, err
	}
	ids := onlineNodes.List()
	var nodes []NUMANode
	var rows [][]int // distances to every online node, in the order of ids
	var kept []int   // positions in ids of the nodes kept
	for i, id := range ids {
		dir := filepath.Join(nodeDir, fmt.Sprintf("node%d", id))
		cpus, err := readList(filepath.Join(dir, "cpulist"))
		if err != nil {
			return nil, err
		}
		cpus = cpus.Intersection(online)
		if knowMemory && !withMemory.Contains(id) && cpus.IsEmpty() {
			continue
		}
		total, free, err := readNodeMeminfo(filepath.Join(dir, "meminfo"))
		if err != nil {
			return nil, err
		}
		row, err := readDistances(filepath.Join(dir, "distance"), len(ids))
		if err != nil {
			return nil, err
		}
		huge, err := readHugePages(dir)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, NUMANode{ID: id, CPUs: cpus, MemoryTotal: total, MemoryFree: free, HugePages: huge})
		rows = append(rows, row)
		kept = append(kept, i)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no online node has cpus or memory", nodeDir)
	}
	// The kernel prints distances to every online node; keep the columns of
	// the nodes kept so the matrix stays square in the order of nodes.
	for n := range nodes {
		nodes[n].Distances = make([]int, len(kept))
		for j, i := range kept {
			nodes[n].Distances[j] = rows[n][i]
		}
	}
	return nodes, nil
}

// readNodeMeminfo reads MemTotal and MemFree, in bytes, from a node's meminfo,
// whose lines look like "Node 0 MemTotal:       16318464 kB".
func readNodeMeminfo(path string) (total, free uint64, err error) {
	b, err := boundedread.File(path, maxAttributeBytes)
	if err != nil {
		return 0, 0, err
	}
	var haveTotal, haveFree bool
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "Node" || (f[2] != "MemTotal:" && f[2] != "MemFree:") {
			continue
		}
		kb, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil || len(f) != 5 || f[4] != "kB" || kb > 1<<53 {
			return 0, 0, fmt.Errorf("%s: malformed line %s", path, Quote(strings.TrimSpace(line)))
		}
		if f[2] == "MemTotal:" {
			total, haveTotal = kb*1024, true
		} else {
			free, haveFree = kb*1024, true
		}
	}
	if !haveTotal || !haveFree {
		return 0, 0, fmt.Errorf("%s: want both MemTotal and MemFree lines", path)
	}
	return total, free, nil
}

// readDistances reads one row of the SLIT matrix, which must have one entry
// per online node.
func readDistances(path string, want int) ([]int, error) {
	s, err := readString(path)
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(s)
	if len(fields) != want {
		return nil, fmt.Errorf("%s: %d distances for %d online nodes", path, len(fields), want)
	}
	row := make([]int, want)
	for i, f := range fields {
		if row[i], err = strconv.Atoi(f); err != nil || row[i] < 0 {
			return nil, fmt.Errorf("%s: distance %s is not a non-negative integer", path, Quote(f))
		}
	}
	return row, nil
}

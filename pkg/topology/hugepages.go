package topology

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// HugePages is one size of a NUMA node's huge pages, as the kernel reports
// them under nodeN/hugepages/hugepages-<size>kB.
type HugePages struct {
	SizeKiB uint64 `json:"sizeKiB"`
	Total   uint64 `json:"total"` // nr_hugepages: the pages reserved on the node
	Free    uint64 `json:"free"`  // free_hugepages: not yet faulted in by anyone
}

// Bytes is the size of n pages of this kind.
func (h HugePages) Bytes(n uint64) uint64 { return n * h.SizeKiB * 1024 }

// The sizes a pod can ask for by name (hugepages-2Mi, hugepages-1Gi).
const (
	HugePages2MiKiB = 2048
	HugePages1GiKiB = 1048576
)

// HugePagesOf returns the node's pool of the given page size, zero when the
// node has none of that size.
func (n NUMANode) HugePagesOf(sizeKiB uint64) HugePages {
	for _, h := range n.HugePages {
		if h.SizeKiB == sizeKiB {
			return h
		}
	}
	return HugePages{SizeKiB: sizeKiB}
}

// ReadNodeHugePages reads node's huge page pools now, under sysfsRoot
// ("" for /sys): free pages change as workloads fault them in, while the
// rest of the topology stays as discovered.
func ReadNodeHugePages(sysfsRoot string, node int) ([]HugePages, error) {
	if sysfsRoot == "" {
		sysfsRoot = "/sys"
	}
	return readHugePages(filepath.Join(sysfsRoot, "devices/system/node", fmt.Sprintf("node%d", node)))
}

// ReadNodeCPUs reads node's CPU list under sysfsRoot ("" for /sys), read
// and bounded as discovery reads it.
func ReadNodeCPUs(sysfsRoot string, node int) (cpuset.CPUSet, error) {
	if sysfsRoot == "" {
		sysfsRoot = "/sys"
	}
	return readList(filepath.Join(sysfsRoot, "devices/system/node", fmt.Sprintf("node%d", node), "cpulist"))
}

// maxHugePageSizes bounds the sizes read per node: x86 has two, arm64 four;
// a --sysfs-root tree may hold any number of directories.
const maxHugePageSizes = 8

// maxHugePages bounds a pool's page count so that its size in bytes stays
// within uint64 for any size Linux offers (16 GiB pages on ppc64).
const maxHugePages = 1 << 28

// readHugePages reads every hugepages-<size>kB directory under a node's
// directory, sorted by size. A node without the directory has none: kernels
// built without hugetlbfs do not create it.
func readHugePages(nodeDir string) ([]HugePages, error) {
	dir := filepath.Join(nodeDir, "hugepages")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []HugePages
	for _, e := range entries {
		size, ok := hugePageSize(e.Name())
		if !ok {
			continue
		}
		if len(out) == maxHugePageSizes {
			return nil, fmt.Errorf("%s: more than %d huge page sizes", dir, maxHugePageSizes)
		}
		h := HugePages{SizeKiB: size}
		if h.Total, err = readPages(filepath.Join(dir, e.Name(), "nr_hugepages")); err != nil {
			return nil, err
		}
		if h.Free, err = readPages(filepath.Join(dir, e.Name(), "free_hugepages")); err != nil {
			return nil, err
		}
		if h.Free > h.Total {
			return nil, fmt.Errorf("%s: %d free huge pages of %d", filepath.Join(dir, e.Name()), h.Free, h.Total)
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b HugePages) int { return cmp.Compare(a.SizeKiB, b.SizeKiB) })
	return out, nil
}

// hugePageSize parses "hugepages-2048kB"; sizes are powers of two from 4 KiB
// to 16 GiB.
func hugePageSize(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, "hugepages-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "kB")
	if !ok {
		return 0, false
	}
	kb, err := strconv.ParseUint(s, 10, 64)
	if err != nil || kb < 4 || kb > 16<<20 || kb&(kb-1) != 0 {
		return 0, false
	}
	return kb, true
}

func readPages(path string) (uint64, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > maxHugePages {
		return 0, fmt.Errorf("%s: %s is not a page count from 0 to %d", path, Quote(s), maxHugePages)
	}
	return n, nil
}

// checkHugePages rejects pools a hostile JSON topology could use to
// overflow a sum of bytes or to make consumers loop.
func checkHugePages(n NUMANode) error {
	if len(n.HugePages) > maxHugePageSizes {
		return fmt.Errorf("numa node %d: %d huge page sizes, at most %d", n.ID, len(n.HugePages), maxHugePageSizes)
	}
	for i, h := range n.HugePages {
		if _, ok := hugePageSize(fmt.Sprintf("hugepages-%dkB", h.SizeKiB)); !ok {
			return fmt.Errorf("numa node %d: hugePages[%d].sizeKiB: %d is not a power of two from 4 to %d", n.ID, i, h.SizeKiB, 16<<20)
		}
		if h.Total > maxHugePages || h.Free > h.Total {
			return fmt.Errorf("numa node %d: hugePages[%d]: total %d, free %d: want free <= total <= %d", n.ID, i, h.Total, h.Free, maxHugePages)
		}
		if i > 0 && h.SizeKiB <= n.HugePages[i-1].SizeKiB {
			return fmt.Errorf("numa node %d: hugePages[%d].sizeKiB: %d not sorted or duplicated", n.ID, i, h.SizeKiB)
		}
	}
	return nil
}

//go:build linux

package locality

import (
	"os"
)

// ExactPages counts pid's resident pages per node page by page, asking the
// kernel where each one is (move_pages(2) with no target nodes moves
// nothing). numa_maps is read only to skip areas without pages; the pid must
// be in this process's pid namespace even when ProcRoot points elsewhere.
// It costs one query per page of every area that holds memory, so prefer
// Process for large processes.
func (r Reader) ExactPages(pid int) (NodePages, error) {
	mapsText, err := r.readFile(pid, "maps")
	if err != nil {
		return nil, err
	}
	ranges, err := ParseMaps(mapsText)
	if err != nil {
		return nil, err
	}
	pm, err := r.Process(pid)
	if err != nil {
		return nil, err
	}
	byStart := map[uint64]Mapping{}
	for _, m := range pm.Mappings {
		byStart[m.Start] = m
	}
	pageSize := uint64(os.Getpagesize())
	out := NodePages{}
	addrs := make([]uintptr, queryChunk)
	status := make([]int32, queryChunk)
	for _, rg := range ranges {
		m, ok := byStart[rg.Start]
		if !ok || rg.Special() || len(m.Nodes) == 0 {
			continue
		}
		step := pageSize
		if m.Huge && m.PageSizeKB*1024 > step {
			step = m.PageSizeKB * 1024
		}
		for addr := rg.Start; addr < rg.End; {
			n := min(uint64(queryChunk), (rg.End-addr)/step)
			if n == 0 {
				break // a tail shorter than one page
			}
			for i := uint64(0); i < n; i++ {
				addrs[i] = uintptr(addr + i*step)
			}
			if err := queryPages(pid, addrs[:n], status[:n]); err != nil {
				return nil, err
			}
			for _, st := range status[:n] {
				if st >= 0 {
					out[int(st)] += step / pageSize
				}
			}
			addr += n * step
		}
	}
	return out, nil
}

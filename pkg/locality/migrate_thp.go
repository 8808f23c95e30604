//go:build linux

package locality

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// thpSize is the size of a transparent huge page on x86-64 and arm64 with
// 4 KiB base pages; elsewhere no head is found and pages go one by one.
const thpSize = 2 << 20

// chunk lists the pages of the n steps from addr to query and perhaps move:
// each page of a hugetlb area; in other areas each base page, except that a
// transparent huge page is named by its head alone, weighing 512.
func (m *mover) chunk(addr, n uint64, rg region) (addrs []uintptr, weights []uint64) {
	addrs, weights = make([]uintptr, 0, n), make([]uint64, 0, n)
	if rg.weight > 1 || m.kpageflags == nil {
		for i := uint64(0); i < n; i++ {
			addrs, weights = append(addrs, uintptr(addr+i*rg.step)), append(weights, rg.weight)
		}
		return addrs, weights
	}
	var heads []int
	if n >= thpSize/m.pageSize {
		entries, err := m.pagemap(addr, n)
		if err != nil {
			m.fatal = err
			return nil, nil
		}
		heads = thpHeads(addr, entries, m.pageSize, thpSize, m.pageFlags)
	}
	per := thpSize / m.pageSize
	for i := uint64(0); i < n; i++ {
		w := uint64(1)
		if len(heads) > 0 && uint64(heads[0]) == i {
			heads, w = heads[1:], per
		}
		addrs, weights = append(addrs, uintptr(addr+i*m.pageSize)), append(weights, w)
		i += w - 1
	}
	return addrs, weights
}

// chunkEnd is where a query chunk from addr ends: queryChunk steps on, but
// on a 2 MiB boundary in base-page areas, so that no THP straddles two
// chunks (it would then be named page by page).
func chunkEnd(addr uint64, rg region) uint64 {
	end := min(rg.end, addr+queryChunk*rg.step)
	if rg.weight == 1 && end < rg.end {
		if cut := end / thpSize * thpSize; cut > addr {
			end = cut
		}
	}
	return end
}

// pagemap reads the /proc/PID/pagemap words of n base pages from addr.
func (m *mover) pagemap(addr, n uint64) ([]uint64, error) {
	path := filepath.Join(Reader{ProcRoot: m.opts.ProcRoot}.root(), strconv.Itoa(m.pid), "pagemap")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoProcess
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if cap(m.pmBuf) < int(n)*8 {
		m.pmBuf = make([]byte, n*8)
	}
	buf := m.pmBuf[:n*8]
	if _, err := f.ReadAt(buf, int64(addr/m.pageSize*8)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(buf[i*8:])
	}
	return out, nil
}

// pageFlags reads the /proc/kpageflags word of a frame.
func (m *mover) pageFlags(pfn uint64) (uint64, bool) {
	var b [8]byte
	if _, err := m.kpageflags.ReadAt(b[:], int64(pfn*8)); err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// openPageFlags opens /proc/kpageflags, or returns nil where it cannot be
// read (no CAP_SYS_ADMIN): base pages are then named one by one, which still
// moves THPs, only with more calls.
func openPageFlags(procRoot string) *os.File {
	f, err := os.Open(filepath.Join(Reader{ProcRoot: procRoot}.root(), "kpageflags"))
	if err != nil {
		return nil
	}
	return f
}

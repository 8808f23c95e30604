//go:build linux

package locality

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The kernel's automatic NUMA balancing maps idle pages PROT_NONE to sample
// their use. On some kernels (Debian's 6.1 among them) a move_pages status
// query then answers -EFAULT or -ENOENT for such a page instead of its node,
// and move_pages cannot move it, until the process touches it again;
// numa_maps still counts it. Left alone, idle remote memory would stay remote.
//
// The migrator tells these pages from absent ones by /proc/PID/pagemap (a
// PROT_NONE page is present there) and touches each present one by reading
// a byte of it with process_vm_readv(2). That read takes the NUMA hinting
// fault the process would take, which restores the mapping; the page can
// then be queried and moved. Absent pages are never touched, so nothing is
// faulted in.

// maxIov is the kernel's IOV_MAX: the most iovecs one process_vm_readv takes.
const maxIov = 1024

// unhide re-queries, after touching them, the pages of a base-page chunk
// whose status says "no page" although pagemap says present; status is
// updated in place.
func (m *mover) unhide(addrs []uintptr, status []int32) {
	var idx []int
	for i, st := range status {
		if st == -int32(unix.ENOENT) || st == -int32(unix.EFAULT) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	present, err := m.presentPages(addrs[idx[0]], addrs[idx[len(idx)-1]])
	if err != nil {
		m.fatal = err
		return
	}
	var hidden []uintptr
	var where []int
	for _, i := range idx {
		if present(addrs[i]) {
			hidden = append(hidden, addrs[i])
			where = append(where, i)
		}
	}
	if len(hidden) == 0 {
		return
	}
	if err := touchPages(m.pid, hidden); err != nil {
		m.fatal = err
		return
	}
	again := make([]int32, len(hidden))
	if err := queryPages(m.pid, hidden, again); err != nil {
		m.fatal = err
		return
	}
	for j, i := range where {
		status[i] = again[j]
	}
	m.res.Unhidden += uint64(len(hidden))
}

// presentPages reads the pagemap entries of [lo, hi] once and answers for
// any base page in that range.
func (m *mover) presentPages(lo, hi uintptr) (func(uintptr) bool, error) {
	page := uintptr(m.pageSize)
	first := lo / page
	words, err := m.pagemap(uint64(first*page), uint64(hi/page-first+1))
	if err != nil {
		return nil, err
	}
	return func(a uintptr) bool { return words[a/page-first]&pagemapPresent != 0 }, nil
}

// touchPages reads one byte of each page of pid, maxIov pages per call.
// A page unmapped meanwhile ends a call early; the rest is not needed.
func touchPages(pid int, addrs []uintptr) error {
	sink := make([]byte, min(len(addrs), maxIov))
	for start := 0; start < len(addrs); start += maxIov {
		chunk := addrs[start:min(start+maxIov, len(addrs))]
		local := []unix.Iovec{{Base: &sink[0]}}
		local[0].SetLen(len(chunk))
		remote := make([]unix.RemoteIovec, len(chunk))
		for i, a := range chunk {
			remote[i] = unix.RemoteIovec{Base: a, Len: 1}
		}
		_, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if errors.Is(err, unix.ESRCH) {
			return ErrNoProcess
		}
		// EFAULT: a page went away between the query and the read.
		if err != nil && !errors.Is(err, unix.EFAULT) {
			return fmt.Errorf("process_vm_readv: %w", err)
		}
	}
	return nil
}

// numaBalancing reports whether the kernel's automatic NUMA balancing is on
// (kernel.numa_balancing is not 0); unknown counts as off.
func numaBalancing(procRoot string) bool {
	b, err := os.ReadFile(filepath.Join(Reader{ProcRoot: procRoot}.root(), "sys/kernel/numa_balancing"))
	return err == nil && len(b) > 0 && b[0] != '0'
}

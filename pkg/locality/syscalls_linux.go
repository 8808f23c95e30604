//go:build linux

package locality

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Flags of move_pages(2) from <linux/mempolicy.h>; x/sys/unix lacks them.
const (
	mpolMFMove    = 1 << 1 // move pages mapped by this process only
	mpolMFMoveAll = 1 << 2 // also pages shared with other processes (CAP_SYS_NICE)
)

// queryPages fills status with the node of each page of pid at addrs, or a
// negative errno (-ENOENT: not present, -EFAULT: zero page or unmapped).
// move_pages(2) with a nil node array only reports, it moves nothing.
func queryPages(pid int, addrs []uintptr, status []int32) error {
	return movePages(pid, addrs, nil, status, 0)
}

// movePages calls move_pages(2). With nodes nil it queries; otherwise page i
// goes to nodes[i] and status[i] gets its node afterwards or a negative
// errno. A positive return (pages not moved, kernels >= 4.17) is not an
// error: status says which ones.
func movePages(pid int, addrs []uintptr, nodes []int32, status []int32, flags int) error {
	if len(addrs) == 0 {
		return nil
	}
	if len(status) < len(addrs) || (nodes != nil && len(nodes) < len(addrs)) {
		return errors.New("move_pages: status or nodes shorter than pages")
	}
	// Pointers are converted inside the call expression so the runtime keeps
	// the arrays alive and in place for the syscall.
	var np *int32
	if nodes != nil {
		np = &nodes[0]
	}
	_, _, errno := unix.Syscall6(unix.SYS_MOVE_PAGES, uintptr(pid), uintptr(len(addrs)),
		uintptr(unsafe.Pointer(&addrs[0])), uintptr(unsafe.Pointer(np)), uintptr(unsafe.Pointer(&status[0])), uintptr(flags))
	if errno != 0 {
		return errno
	}
	return nil
}

// migratePages calls migrate_pages(2): every page of pid on a node of from
// moves to the node of to at the same position (the kernel remaps when the
// sets differ in size). It returns the number of pages that could not move.
// As root it moves pages shared with other processes too.
func migratePages(pid int, from, to []int) (int, error) {
	oldMask, maxnode := nodeMask(from, to)
	newMask, _ := nodeMask(to, from)
	r, _, errno := unix.Syscall6(unix.SYS_MIGRATE_PAGES, uintptr(pid), uintptr(maxnode),
		uintptr(unsafe.Pointer(&oldMask[0])), uintptr(unsafe.Pointer(&newMask[0])), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// capSysNice is CAP_SYS_NICE's bit in the capability sets.
const capSysNice = 23

// migratePagesPrivate is migratePages without moving pages that other
// processes map too, as move_pages with MPOL_MF_MOVE does: the kernel moves
// shared pages when, and only when, the caller has CAP_SYS_NICE, so the
// call is made from a locked thread with CAP_SYS_NICE dropped from its
// effective set (capabilities are per thread), and restored afterwards.
// Permission to move another process's pages at all comes from ptrace
// access (root, or the same user), not from CAP_SYS_NICE.
func migratePagesPrivate(pid int, from, to []int) (int, error) {
	type result struct {
		left int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var caps [2]unix.CapUserData
		if err := unix.Capget(&hdr, &caps[0]); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: err}
			return
		}
		had := caps[0].Effective&(1<<capSysNice) != 0
		if had {
			dropped := caps
			dropped[0].Effective &^= 1 << capSysNice
			if err := unix.Capset(&hdr, &dropped[0]); err != nil {
				runtime.UnlockOSThread()
				done <- result{err: err}
				return
			}
		}
		left, err := migratePages(pid, from, to)
		if had && unix.Capset(&hdr, &caps[0]) != nil {
			// The thread could not take its capability back: it stays
			// locked, so the runtime ends it with this goroutine.
			done <- result{left, err}
			return
		}
		runtime.UnlockOSThread()
		done <- result{left, err}
	}()
	r := <-done
	return r.left, r.err
}

// nodeMask builds a node bitmap wide enough for the nodes of both sets and
// the maxnode argument the kernel expects: it reads maxnode-1 bits, so one
// more than the bitmap's width (as libnuma passes it).
func nodeMask(nodes, other []int) ([]uint64, int) {
	top := 0
	for _, n := range append(append([]int{}, nodes...), other...) {
		top = max(top, n)
	}
	mask := make([]uint64, top/64+1)
	for _, n := range nodes {
		mask[n/64] |= 1 << (n % 64)
	}
	return mask, len(mask)*64 + 1
}

// kernelRelease is the running kernel's release (uname -r), "" when uname
// fails.
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

package smoke

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Memory policy constants from <linux/mempolicy.h>; x/sys/unix has the
// syscall numbers but not these.
const (
	mpolDefault = 0
	mpolBind    = 2
	mpolMFMove  = 1 << 1
)

// nodeMask is a one-word node bitmask; maxnode tells the kernel its width. The
// kernel reads maxnode-1 bits, hence the +1.
func nodeMask(nodes ...int) (mask [1]uint64, maxnode uintptr) {
	for _, n := range nodes {
		mask[0] |= 1 << uint(n)
	}
	return mask, 64 + 1
}

// mbind sets the policy of the mapping that starts at buf.
func mbind(buf []byte, mode int, nodes ...int) error {
	mask, maxnode := nodeMask(nodes...)
	_, _, e := unix.Syscall6(unix.SYS_MBIND, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
		uintptr(mode), uintptr(unsafe.Pointer(&mask[0])), maxnode, 0)
	if e != 0 {
		return fmt.Errorf("mbind(mode %d, nodes %v): %w", mode, nodes, e)
	}
	return nil
}

// setMempolicy sets the calling thread's policy; callers lock the OS thread.
func setMempolicy(mode int, nodes ...int) error {
	mask, maxnode := nodeMask(nodes...)
	var maskPtr uintptr
	if len(nodes) > 0 {
		maskPtr = uintptr(unsafe.Pointer(&mask[0]))
	}
	_, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(mode), maskPtr, maxnode)
	if e != 0 {
		return fmt.Errorf("set_mempolicy(mode %d, nodes %v): %w", mode, nodes, e)
	}
	return nil
}

// movePages calls move_pages(2) on pid's pages at addrs. With target < 0 it
// only queries: each status is the page's node or a negative errno. Otherwise
// it moves every page to target and returns the per-page result.
func movePages(pid int, addrs []uintptr, target int) ([]int32, error) {
	status := make([]int32, len(addrs))
	var nodesPtr uintptr
	if target >= 0 {
		nodes := make([]int32, len(addrs))
		for i := range nodes {
			nodes[i] = int32(target)
		}
		nodesPtr = uintptr(unsafe.Pointer(&nodes[0]))
	}
	_, _, e := unix.Syscall6(unix.SYS_MOVE_PAGES, uintptr(pid), uintptr(len(addrs)),
		uintptr(unsafe.Pointer(&addrs[0])), nodesPtr, uintptr(unsafe.Pointer(&status[0])), mpolMFMove)
	if e != 0 {
		return nil, fmt.Errorf("move_pages(pid %d, %d pages, to %d): %w", pid, len(addrs), target, e)
	}
	return status, nil
}

// migratePages calls migrate_pages(2): every page of pid on a node in from
// moves to the node at the same position in to. It returns how many pages
// could not be moved.
func migratePages(pid int, from, to []int) (int, error) {
	oldMask, maxnode := nodeMask(from...)
	newMask, _ := nodeMask(to...)
	n, _, e := unix.Syscall6(unix.SYS_MIGRATE_PAGES, uintptr(pid), maxnode,
		uintptr(unsafe.Pointer(&oldMask[0])), uintptr(unsafe.Pointer(&newMask[0])), 0, 0)
	if e != 0 {
		return 0, fmt.Errorf("migrate_pages(pid %d, %v -> %v): %w", pid, from, to, e)
	}
	return int(n), nil
}

// pageAddrs returns the address of every page of a region.
func pageAddrs(start uintptr, size int) []uintptr {
	ps := unix.Getpagesize()
	out := make([]uintptr, 0, size/ps)
	for off := 0; off < size; off += ps {
		out = append(out, start+uintptr(off))
	}
	return out
}

// histogram counts pages per node; negative keys are errnos (-16 is EBUSY).
func histogram(status []int32) map[int]int {
	h := map[int]int{}
	for _, s := range status {
		h[int(s)]++
	}
	return h
}

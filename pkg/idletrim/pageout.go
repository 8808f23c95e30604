package idletrim

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxMappings bounds how much of /proc/self/maps is read: a Go process has
// a few dozen mappings; a list longer than this is not one to act on.
const maxMappings = 4096

// ErrPageOutUnsupported says the kernel has no MADV_PAGEOUT (Linux < 5.4).
var ErrPageOutUnsupported = errors.New("the kernel has no MADV_PAGEOUT")

// PageOutExecutable asks the kernel to reclaim the pages of the running
// executable's read-only mappings (code, read-only data, function tables)
// and returns how many bytes of mappings it asked for.
//
// Why: every package linked into the binary runs its initialisers at start,
// and those touch tens of MiB of code and data the agent never runs again
// (the Kubernetes client's API groups in standalone mode, the other
// commands' packages). They stay resident, counted in the agent's RSS and
// in its container's memory, until the kernel is short of memory. Pages
// the agent still runs are faulted in again from the file at their next
// use; none of these pages is written, so nothing is lost.
func PageOutExecutable() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var asked int64
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		if n == maxMappings {
			return asked, fmt.Errorf("/proc/self/maps: more than %d mappings", maxMappings)
		}
		start, end, ok := readOnlyMappingOf(sc.Text(), exe)
		if !ok {
			continue
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT)
		switch errno {
		case 0:
			asked += int64(end - start)
		case unix.EINVAL:
			return asked, ErrPageOutUnsupported
		default:
			return asked, fmt.Errorf("madvise(MADV_PAGEOUT) of %x-%x: %w", start, end, errno)
		}
	}
	return asked, sc.Err()
}

// readOnlyMappingOf parses one line of /proc/self/maps ("start-end perms
// offset dev inode path") and says whether it maps path without write
// permission. A writable mapping of the binary (its data) is private
// memory once written, not the file's pages, and is left alone.
func readOnlyMappingOf(line, path string) (start, end uint64, ok bool) {
	fields := strings.SplitN(line, " ", 6)
	if len(fields) < 6 || strings.TrimLeft(fields[5], " ") != path || len(fields[1]) < 2 || fields[1][1] != '-' {
		return 0, 0, false
	}
	lo, hi, found := strings.Cut(fields[0], "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return 0, 0, false
	}
	return start, end, true
}

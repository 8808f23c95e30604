package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/boundedread"
)

// The helpers below read one sysfs attribute each. Every error names the file,
// so a broken tree points straight at the attribute to look at.

// readString returns a file's content without surrounding whitespace. It uses
// bare open/read/close rather than os.ReadFile, which also stats the file,
// registers it with the poller and reads twice: discovery opens hundreds of
// tiny files, and those extra system calls were most of its time.
func readString(path string) (string, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	// sysfs hands over a whole attribute in one read, and a short read from a
	// regular file means end of file, so one read suffices unless it fills buf.
	var buf [8192]byte
	n, err := syscall.Read(fd, buf[:])
	for err == syscall.EINTR {
		n, err = syscall.Read(fd, buf[:])
	}
	if err != nil {
		return "", &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if n == len(buf) {
		b, err := boundedread.File(path, maxAttributeBytes)
		return strings.TrimSpace(string(b)), err
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

// maxAttributeBytes bounds one sysfs attribute: the kernel hands over at
// most a page; a --sysfs-root tree may hold anything.
const maxAttributeBytes = 1 << 20

func readInt(path string) (int, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %s is not an integer", path, Quote(s))
	}
	return n, nil
}

// readOptionalInt reports found=false, without error, when the file is absent.
func readOptionalInt(path string) (n int, found bool, err error) {
	n, err = readInt(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	return n, err == nil, err
}

func readList(path string) (cpuset.CPUSet, error) {
	s, err := readString(path)
	if err != nil {
		return cpuset.New(), err
	}
	set, err := ParseCPUList(s)
	if err != nil {
		return cpuset.New(), fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// readOptionalList reports found=false, without error, when the file is absent.
func readOptionalList(path string) (set cpuset.CPUSet, found bool, err error) {
	set, err = readList(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cpuset.New(), false, nil
	}
	return set, err == nil, err
}

// lowestOnline is the smallest online CPU of set, counting self as a member:
// sysfs lists may name offline CPUs on some kernels, and a CPU always belongs
// to its own core and cache.
func lowestOnline(set cpuset.CPUSet, self int, online cpuset.CPUSet) int {
	low := self
	for _, id := range set.UnsortedList() {
		if id < low && online.Contains(id) {
			low = id
		}
	}
	return low
}

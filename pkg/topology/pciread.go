package topology

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/locus-project/locus/pkg/boundedread"
)

// The PCI tree is read under caps of its own: a machine may have thousands
// of functions, and a --sysfs-root tree may put anything where an attribute
// belongs (a FIFO, /dev/zero, a file of gigabytes, a symlink loop).
const (
	// MaxPCIDevices bounds the functions discovery keeps: large servers have
	// a few hundred, SR-IOV hosts a few thousand virtual functions.
	MaxPCIDevices = 4096
	// maxPCIEntries bounds the entries of bus/pci/devices looked at, names
	// that are no address included, so a directory of millions of entries
	// is refused after a bounded read.
	maxPCIEntries = 4 * MaxPCIDevices
	// maxPCIAttrBytes bounds one attribute: the kernel hands over at most a
	// page, and a CPU list of 8192 CPUs fits in 64 KiB whatever its holes.
	maxPCIAttrBytes = 64 << 10
	// maxPCITreeBytes bounds every attribute of every function together:
	// five attributes of a few bytes each, times MaxPCIDevices, with room.
	maxPCITreeBytes = 4 << 20
)

// attrReader reads the attributes of device directories into one buffer
// allocated up front, charging every byte to the tree's budget.
type attrReader struct {
	buf   []byte
	left  int
	limit int // the whole tree's, for the error
}

func newAttrReader(limit int) *attrReader {
	return &attrReader{buf: make([]byte, maxPCIAttrBytes+1), left: limit, limit: limit}
}

// read returns the attribute name of the directory open as dirfd (dir is
// its path, for errors), without surrounding whitespace. It opens and reads
// without blocking, so a FIFO in a fixture tree reads empty (or EAGAIN)
// rather than hanging, and an endless device stops at the cap. It does not
// stat the file first: that would be a fourth system call per attribute,
// for a better error only.
func (r *attrReader) read(dirfd int, dir, name string) (string, error) {
	path := func() string { return filepath.Join(dir, name) }
	fd, err := syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: path(), Err: err}
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(r.buf) {
		m, err := syscall.Read(fd, r.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: "read", Path: path(), Err: err}
		}
		n += m
		// A short read is the end: sysfs hands over a whole attribute in
		// one read, and so does a regular file; a FIFO without a writer
		// reads empty at once.
		if m == 0 || n < len(r.buf) {
			break
		}
	}
	if n > maxPCIAttrBytes {
		return "", &boundedread.TooLargeError{Path: path(), Limit: maxPCIAttrBytes}
	}
	if n > r.left {
		return "", fmt.Errorf("%s: the PCI device attributes read hold more than %s in all", path(), boundedread.Size(int64(r.limit)))
	}
	r.left -= n
	return strings.TrimSpace(string(r.buf[:n])), nil
}

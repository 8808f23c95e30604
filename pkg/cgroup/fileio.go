package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// WriteError is a failed cgroup write; it names the file and the value, and
// explains the errnos whose meaning on cgroup files is not obvious.
type WriteError struct {
	Path  string
	Value string
	Err   error
}

func (e *WriteError) Error() string {
	msg := fmt.Sprintf("write %q to %s: %v", e.Value, e.Path, e.Err)
	if h := errnoHint(e.Err); h != "" {
		msg += " (" + h + ")"
	}
	return msg
}

func (e *WriteError) Unwrap() error { return e.Err }

func errnoHint(err error) string {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return ""
	}
	switch errno {
	case unix.EBUSY:
		return "a child cgroup still uses these CPUs or nodes, the cgroup is not empty, or usage is above the new limit"
	case unix.EINVAL:
		return "the kernel rejects this value for this file"
	case unix.ENOSPC:
		return "cpuset.cpus or cpuset.mems would be empty with tasks attached; a v1 cpuset needs both before a task joins"
	case unix.EACCES:
		return "on v1 cpusets: the value is not within the parent's"
	case unix.ERANGE:
		return "a CPU or memory node in the list is not present"
	case unix.ESRCH:
		return "no such process"
	case unix.ELOOP:
		return "a symlink on the way, which Locus never follows inside the cgroup tree"
	case unix.EXDEV:
		return "the path leads out of the cgroup root"
	}
	return ""
}

// readFile returns a cgroup file's content without surrounding whitespace.
// It opens the file beneath the root without following any symlink
// (openBeneath). It uses open(2), read(2) and close(2) directly: an *os.File
// also registers each file with the runtime's poller (cgroup files support
// poll, so it succeeds), which adds several system calls at open and close
// to each of the thousands of files a reconcile reads.
func (h *Hierarchy) readFile(path string) (string, error) {
	fd, err := h.openBeneath(path, unix.O_RDONLY)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return "", fmt.Errorf("%s: a symlink on the way, which Locus never follows inside the cgroup tree: %w", path, err)
	}
	if err != nil {
		return "", &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var small [256]byte // nearly every cgroup file fits
	buf := small[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		if n == 0 {
			return strings.TrimSpace(string(buf)), nil
		}
		buf = buf[:len(buf)+n]
	}
}

// writeFile writes value to an existing cgroup file in one write(2): no
// O_CREAT, because a missing file means an unsupported knob, never one to
// create; O_TRUNC only matters to fixture trees on ordinary filesystems.
// Like readFile it opens the file beneath the root, following no symlink.
func (h *Hierarchy) writeFile(path, value string) error {
	fd, err := h.openBeneath(path, unix.O_WRONLY|unix.O_TRUNC)
	if err != nil {
		return &WriteError{Path: path, Value: value, Err: err}
	}
	for {
		_, err = unix.Write(fd, []byte(value))
		if err != unix.EINTR {
			break
		}
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &WriteError{Path: path, Value: value, Err: err}
	}
	return nil
}

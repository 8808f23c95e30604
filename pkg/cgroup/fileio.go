package cgroup

import (
	"errors"
	"fmt"
	"io"
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
	}
	return ""
}

// readFile returns a cgroup file's content without surrounding whitespace. It
// never follows a symlink in the last component.
func readFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeFile writes value to an existing cgroup file in one write(2): no
// O_CREAT, because a missing file means an unsupported knob, never one to
// create; O_TRUNC only matters to fixture trees on ordinary filesystems.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &WriteError{Path: path, Value: value, Err: unwrapPathError(err)}
	}
	_, werr := f.WriteString(value)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		return &WriteError{Path: path, Value: value, Err: unwrapPathError(werr)}
	}
	return nil
}

// unwrapPathError drops the *PathError layer so WriteError prints the path once.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func mkdirCgroup(dir string) error { return os.Mkdir(dir, 0o755) }

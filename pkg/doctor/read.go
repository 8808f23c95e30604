package doctor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/locus-project/locus/pkg/topology"
)

// maxAttr bounds a kernel attribute (sysfs, /proc/sys, a cgroup file): the
// longest Locus reads, /proc/cmdline, is at most a few KiB; a CPU list of
// every id spelled out is topology.MaxListLen.
const maxAttr = topology.MaxListLen

// readErr is why a file could not be used: its path and the reason.
type readErr struct {
	path, reason string
	missing      bool
}

func (e *readErr) Error() string { return e.path + ": " + e.reason }

// isMissing reports whether err says the file does not exist.
func isMissing(err error) bool {
	var re *readErr
	return errors.As(err, &re) && re.missing
}

// readText reads a whole text file of at most limit bytes, opened read-only.
// A file that is longer, holds NUL bytes or is not UTF-8 is refused: the
// kernel writes none of these into the files the checks read.
func readText(path string, limit int64) (string, error) {
	// O_NONBLOCK: a FIFO planted where a file should be must not hang the
	// check; it is refused below as not a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", &readErr{path: path, reason: plainOSError(err), missing: errors.Is(err, fs.ErrNotExist)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", &readErr{path: path, reason: "not a regular file"}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", &readErr{path: path, reason: plainOSError(err)}
	}
	if int64(len(b)) > limit {
		return "", &readErr{path: path, reason: fmt.Sprintf("longer than %d bytes: not the file expected here", limit)}
	}
	if !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
		return "", &readErr{path: path, reason: "binary content: not the file expected here"}
	}
	return string(b), nil
}

// readAttr reads a kernel attribute and trims it; empty is refused as
// truncated.
func readAttr(path string) (string, error) {
	s, err := readText(path, maxAttr)
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", &readErr{path: path, reason: "empty (truncated?)"}
	}
	return s, nil
}

// readInt reads an attribute holding one integer.
func readInt(path string) (int64, error) {
	s, err := readAttr(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &readErr{path: path, reason: topology.Quote(s) + " is not an integer"}
	}
	return n, nil
}

// plainOSError is an OS error without the path, which readErr adds.
func plainOSError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// unreadable is the result for a file a check needs and cannot use.
func unreadable(status Status, err error, do string) Result {
	return Result{Status: status, Found: err.Error(), Do: do}
}

// exists reports whether path exists (without following a final symlink
// out of the tree: Lstat).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

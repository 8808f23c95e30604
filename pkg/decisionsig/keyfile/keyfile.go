// Package keyfile reads the key file of the scheduler's decision
// signatures (pkg/decisionsig) and reads it again whenever it changes: the
// kubelet updates a mounted Secret in place (a new file behind the same
// path), so a key rotated in the Secret reaches a running scheduler and
// agent. It is the one part of the signing that does I/O.
package keyfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/locus-project/locus/pkg/decisionsig"
)

// File is a key file, read again when it changes. Safe for concurrent use.
type File struct {
	path string
	// MinInterval is the least time between two looks at the file (a
	// stat); the scheduler asks for the keys once per pod.
	MinInterval time.Duration
	now         func() time.Time

	mu     sync.Mutex
	looked time.Time
	stamp  string
	keys   *decisionsig.Keys
	err    error
}

// New reads nothing yet; the first Keys does.
func New(path string) *File {
	return &File{path: path, MinInterval: time.Second, now: time.Now}
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Keys are the keys last read, and the error of the last read when it
// failed: a file that cannot be read or parsed keeps the keys read before
// it (a rotation half written must not stop every decision), and nil
// before any good read. changed says the keys or the error differ from the
// last call's, for a caller to log once.
func (f *File) Keys() (keys *decisionsig.Keys, changed bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if !f.looked.IsZero() && now.Sub(f.looked) < f.MinInterval {
		return f.keys, false, f.err
	}
	f.looked = now
	stamp := fileStamp(f.path) // never "", so the first call reads
	if stamp == f.stamp {
		return f.keys, false, f.err
	}
	f.stamp = stamp
	oldKeys, oldErr := f.keys, f.err
	k, err := readKeys(f.path)
	if err != nil {
		f.err = fmt.Errorf("decision key file %s: %w", f.path, err)
	} else {
		f.keys, f.err = k, nil
	}
	return f.keys, f.keys != oldKeys || errString(f.err) != errString(oldErr), f.err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// readKeys reads a regular file of at most decisionsig.MaxFileBytes
// (following the kubelet's symlinks) and parses it.
func readKeys(path string) (*decisionsig.Keys, error) {
	// O_NONBLOCK: a FIFO in its place is refused, not waited on.
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	raw, err := io.ReadAll(io.LimitReader(fh, decisionsig.MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	return decisionsig.ParseKeys(raw)
}

// fileStamp changes when the file behind path changes: its inode (a
// Secret's update swaps the file), size or modification time; "-" when it
// cannot be read.
func fileStamp(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	ino := uint64(0)
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = sys.Ino
	}
	return fmt.Sprintf("%d/%d/%d", ino, st.Size(), st.ModTime().UnixNano())
}

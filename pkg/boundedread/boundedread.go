// Package boundedread reads a whole file only up to a size cap. A path a user
// names may be /dev/zero, a log that grew for years or a FIFO that never
// ends; reading it whole would exhaust memory before any parser could refuse
// it.
package boundedread

import (
	"fmt"
	"io"
	"os"
)

// TooLargeError says a file holds more than the cap; nothing of it was used.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the most read", e.Path, Size(e.Limit))
}

// File returns the content of path, or a *TooLargeError when it holds more
// than limit bytes (at most limit+1 bytes are ever read). Open and read
// errors are the *fs.PathError of os, naming the path.
func File(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A regular file says its size: the buffer is made that large once
	// (never beyond limit+1), not grown from 512 bytes by doubling, which
	// for the agent's checkpoint, read twice a reconcile, was 3 % of the
	// bytes it allocated under a 300-pod churn. Files that report no size
	// (procfs, sysfs, cgroupfs) are read as any reader.
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return sized(f, path, limit, min(fi.Size(), limit)+1)
	}
	return Reader(f, path, limit)
}

// sized is Reader with a first buffer of n bytes: a file read whole in one
// buffer of its size plus one byte, which sees the end at once.
func sized(r io.Reader, name string, limit, n int64) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	b := make([]byte, 0, n)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew since: let append grow it
		}
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: name, Limit: limit}
	}
	return b, nil
}

// Reader is File on an open reader; name is what the error calls it.
func Reader(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: name, Limit: limit}
	}
	return b, nil
}

// Size writes a cap the way a user reads it: 16 MiB, 64 KiB, 100 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

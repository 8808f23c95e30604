package stress

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// MemBW is a memory-bandwidth load: Workers threads, each streaming over a
// buffer of its own of Bytes (copying one half onto the other, in chunks,
// back and forth). A buffer well beyond the last-level cache makes every
// pass go to DRAM, so the workers take memory bandwidth from everything
// else on the socket, not only CPU time.
type MemBW struct {
	Workers int
	Bytes   int64 // per worker; rounded up to whole pages
}

// Bounds on a memory-bandwidth load: a few workers saturate a socket's
// memory channels, and a buffer of gigabytes is already far beyond any L3.
const (
	MaxMemBWWorkers = 256
	MinMemBWBytes   = 1 << 20
	MaxMemBWBytes   = 16 << 30
)

// Check says what is wrong with m, naming the flag. Zero workers is no load.
func (m MemBW) Check() error {
	switch {
	case m.Workers < 0 || m.Workers > MaxMemBWWorkers:
		return fmt.Errorf("--mem-bw %d: want 0..%d workers", m.Workers, MaxMemBWWorkers)
	case m.Workers > 0 && (m.Bytes < MinMemBWBytes || m.Bytes > MaxMemBWBytes):
		return fmt.Errorf("--mem-bw-size %s: want %s..%s per worker",
			humanBytes(m.Bytes), humanBytes(MinMemBWBytes), humanBytes(MaxMemBWBytes))
	}
	return nil
}

// memBWChunk is how much one copy moves between checks of stop: small enough
// that a worker stops within a fraction of a millisecond, large enough that
// the check costs nothing against the copy.
const memBWChunk = 1 << 20

// stream copies the first half of buf onto the second and back, chunk by
// chunk, until stop is set, adding the bytes read and written to moved.
func stream(buf []byte, stop *atomic.Bool, moved *atomic.Int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	half := len(buf) / 2
	a, b := buf[:half], buf[half:2*half]
	for !stop.Load() {
		for off := 0; off < half && !stop.Load(); off += memBWChunk {
			end := min(off+memBWChunk, half)
			n := copy(b[off:end], a[off:end])
			moved.Add(2 * int64(n))
			// memmove cannot be preempted: yield, or a run with more
			// workers than GOMAXPROCS starves its own timers.
			runtime.Gosched()
		}
		a, b = b, a
	}
}

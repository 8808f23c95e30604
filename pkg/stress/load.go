package stress

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Config is one run of the load generator.
type Config struct {
	CPUMilli int64 // CPU share in millicores; 0 burns nothing
	// LoadPercent scales every burner thread's busy share (100: unchanged).
	LoadPercent int
	MemoryBytes int64 // resident memory; rounded up to whole pages; 0 allocates nothing
	// Duration ends the run; 0 runs until ctx is done.
	Duration time.Duration
	// TouchInterval is how often every page is read and written back (so it
	// stays resident and hot) and, with Verify, the checksum re-checked.
	TouchInterval time.Duration
	Verify        bool
	Seed          uint64
	// MemBW streams over buffers of its own, for memory bandwidth.
	MemBW MemBW
}

// Summary is what a run did.
type Summary struct {
	Elapsed     time.Duration
	CPUTime     time.Duration // user + system time of the whole process
	Threads     int
	MemoryBytes int64
	Touches     int
	Verified    int
	Checksum    uint64
	MemBW       MemBW // the memory-bandwidth workers, with their buffer size
	Streamed    int64 // bytes the memory-bandwidth workers read and wrote
}

func (s Summary) String() string {
	return fmt.Sprintf("ran %s: %d burner thread(s), cpu time %s (%.2f CPUs), %s resident, checksum %#016x, %d touch pass(es), %d verification(s)",
		s.Elapsed.Round(time.Millisecond), s.Threads, s.CPUTime.Round(time.Millisecond),
		s.CPUTime.Seconds()/max(s.Elapsed.Seconds(), 1e-9), humanBytes(s.MemoryBytes),
		s.Checksum, s.Touches, s.Verified) + s.streamed()
}

func (s Summary) streamed() string {
	if s.MemBW.Workers == 0 {
		return ""
	}
	return fmt.Sprintf(", %d memory-bandwidth worker(s) over %s each streamed %s (%s/s)",
		s.MemBW.Workers, humanBytes(s.MemBW.Bytes), humanBytes(s.Streamed),
		humanBytes(int64(float64(s.Streamed)/max(s.Elapsed.Seconds(), 1e-9))))
}

// Run applies the load until cfg.Duration passes or ctx is done. It returns
// a *Corruption error (with the summary so far) when Verify finds the memory
// changed.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	threads, err := Threads(cfg.CPUMilli, cfg.LoadPercent)
	if err != nil {
		return Summary{}, err
	}
	if cfg.MemoryBytes < 0 {
		return Summary{}, fmt.Errorf("memory %d is negative", cfg.MemoryBytes)
	}
	if cfg.TouchInterval <= 0 {
		return Summary{}, fmt.Errorf("touch interval %s must be positive", cfg.TouchInterval)
	}
	if err := cfg.MemBW.Check(); err != nil {
		return Summary{}, err
	}
	start := time.Now()
	cpu0 := processCPUTime()
	mem, err := mapAnonymous(cfg.MemoryBytes)
	if err != nil {
		return Summary{}, err
	}
	defer unmap(mem)
	Fill(mem, cfg.Seed) // writing every byte makes every page resident
	sum := Summary{Threads: len(threads), MemoryBytes: int64(len(mem)), Checksum: Checksum(mem), MemBW: cfg.MemBW}
	streams := make([][]byte, cfg.MemBW.Workers)
	for i := range streams {
		if streams[i], err = mapAnonymous(cfg.MemBW.Bytes); err != nil {
			return Summary{}, err
		}
		defer unmap(streams[i])
		// Written, so the reads come from DRAM and not the shared zero page.
		Fill(streams[i], cfg.Seed+uint64(i)+1)
	}
	if len(streams) > 0 {
		sum.MemBW.Bytes = int64(len(streams[0]))
	}

	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	// One OS thread running per busy thread, even beyond the CPUs Go saw at
	// start (a cpuset of one CPU gives GOMAXPROCS 1): the kernel, and so the
	// cgroup's weight and cpu.idle, decides who runs, not Go's scheduler
	// taking turns between them.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(Procs(runtime.GOMAXPROCS(0), len(threads)+len(streams))))
	var stop atomic.Bool
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, f := range threads {
		wg.Add(1)
		go func() { defer wg.Done(); burn(f, &stop, done) }()
	}
	var moved atomic.Int64
	for _, buf := range streams {
		wg.Add(1)
		go func() { defer wg.Done(); stream(buf, &stop, &moved) }()
	}
	err = watch(ctx, mem, cfg, &sum)
	stop.Store(true)
	close(done)
	wg.Wait()
	if err == nil && cfg.Verify {
		err = verify(mem, cfg.Seed, &sum)
	}
	sum.Streamed = moved.Load()
	sum.Elapsed = time.Since(start)
	sum.CPUTime = processCPUTime() - cpu0
	return sum, err
}

// Procs is the GOMAXPROCS a run of busy threads needs: one per thread, plus
// one for the goroutine that touches memory and watches the clock, and never
// fewer than cur.
func Procs(cur, busy int) int {
	return max(cur, busy+1)
}

// watch touches (and verifies) the memory every TouchInterval until ctx ends.
func watch(ctx context.Context, mem []byte, cfg Config, sum *Summary) error {
	tick := time.NewTicker(cfg.TouchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if len(mem) == 0 {
			continue
		}
		touch(mem)
		sum.Touches++
		if cfg.Verify {
			if err := verify(mem, cfg.Seed, sum); err != nil {
				return err
			}
		}
	}
}

func verify(mem []byte, seed uint64, sum *Summary) error {
	sum.Verified++
	if Checksum(mem) == sum.Checksum {
		return nil
	}
	if c := FirstMismatch(mem, seed); c != nil {
		return c
	}
	// The checksum differs but the pattern matches: the data was changed
	// and changed back while we read it. Still not what was written.
	return errors.New("memory checksum changed while the pattern reads back intact")
}

// touchMask is zero; writing b^touchMask back stores b again, but the
// compiler cannot drop the store, so every page really is written.
var touchMask byte

// touch reads and rewrites one byte per page.
func touch(mem []byte) {
	page := os.Getpagesize()
	for off := 0; off < len(mem); off += page {
		mem[off] ^= touchMask
	}
}

// burn keeps its own OS thread busy for fraction f of every Period until
// stop is set (checked while spinning) and done closed (ends a sleep).
func burn(f float64, stop *atomic.Bool, done <-chan struct{}) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	busy, idle := DutyCycle(f, Period)
	x := uint64(1)
	for !stop.Load() {
		deadline := time.Now().Add(busy)
		for time.Now().Before(deadline) && !stop.Load() {
			x = spin(x)
		}
		if idle > 0 {
			select {
			case <-done:
			case <-time.After(idle):
			}
		}
	}
	spinSink.Add(x)
}

// spinSink keeps the burners' arithmetic observable so it is not optimised away.
var spinSink atomic.Uint64

// spin does a few hundred nanoseconds of arithmetic between clock reads.
func spin(x uint64) uint64 {
	for i := 0; i < 256; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// mapAnonymous maps n bytes (rounded up to pages) outside the Go heap, so the
// garbage collector neither scans nor moves them and RSS shows them exactly.
func mapAnonymous(n int64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	page := int64(os.Getpagesize())
	n = (n + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("allocate %s: %w", humanBytes(n), err)
	}
	return mem, nil
}

func unmap(mem []byte) {
	if mem != nil {
		_ = unix.Munmap(mem)
	}
}

func processCPUTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n), "B"
	for _, s := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

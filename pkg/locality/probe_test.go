//go:build linux

package locality

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The child's wait probe records what the workload itself waits for while
// its memory moves, rather than how long the mover's calls last: its
// touching thread times every page it touches, and one more thread maps and
// unmaps a little memory every millisecond, which takes the process's mmap
// lock for writing and so waits for whoever holds it.
const envProbe = "LOCALITY_CHILD_PROBE" // "1": run the wait probe

// waitProbe holds the longest waits since the last read, in nanoseconds.
// The touching and mapping threads raise them; a "PROBE" line on stdin
// reads and clears them.
type waitProbe struct {
	gap     atomic.Int64 // between the starts of two consecutive touches
	access  atomic.Int64 // one touch, a single write to one page
	mmap    atomic.Int64 // one mmap and munmap of probeMapBytes
	touches atomic.Int64
}

// probeMapBytes is what the mapping thread maps and unmaps: 16 pages,
// touched once, so the unmap has a page to free.
const probeMapBytes = 64 << 10

// raise stores d in v when it is longer. Each field has one writer, so a
// load and a store suffice; a read's clear in between is at worst undone by
// a wait that began before it.
func raise(v *atomic.Int64, d time.Duration) {
	if int64(d) > v.Load() {
		v.Store(int64(d))
	}
}

// read returns the waits since the last read and clears them.
func (p *waitProbe) read() probeWaits {
	return probeWaits{
		Gap: time.Duration(p.gap.Swap(0)), Access: time.Duration(p.access.Swap(0)),
		Mmap: time.Duration(p.mmap.Swap(0)), Touches: p.touches.Swap(0),
	}
}

// probeWaits is one reading of the probe.
type probeWaits struct {
	Gap, Access, Mmap time.Duration
	Touches           int64
}

func (w probeWaits) line() string {
	return fmt.Sprintf("PROBE %d %d %d %d", w.Gap, w.Access, w.Mmap, w.Touches)
}

func parseProbeLine(f []string) (probeWaits, error) {
	if len(f) != 5 {
		return probeWaits{}, fmt.Errorf("PROBE line %v: want 4 numbers", f)
	}
	var n [4]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return probeWaits{}, fmt.Errorf("PROBE line %v: %w", f, err)
		}
		n[i] = v
	}
	return probeWaits{Gap: time.Duration(n[0]), Access: time.Duration(n[1]), Mmap: time.Duration(n[2]), Touches: n[3]}, nil
}

// keepTouchingTimed is keepTouching with every touch timed into p.
func keepTouchingTimed(mem []byte, i, n int, p *waitProbe) {
	runtime.LockOSThread()
	lo, hi := len(mem)*i/n, len(mem)*(i+1)/n
	prev := time.Now()
	for {
		var count int64
		for off := lo; off < hi; off += 4096 {
			start := time.Now()
			mem[off] = same(mem[off])
			end := time.Now()
			raise(&p.access, end.Sub(start))
			raise(&p.gap, start.Sub(prev))
			prev = start
			count++
		}
		p.touches.Add(count)
		time.Sleep(time.Millisecond)
	}
}

// keepMapping maps, touches and unmaps probeMapBytes every millisecond and
// records the longest round; mmap and munmap take the mmap lock for
// writing, so a mover that holds it (for reading) makes this wait.
func keepMapping(p *waitProbe) {
	runtime.LockOSThread()
	for {
		start := time.Now()
		mem, err := unix.Mmap(-1, 0, probeMapBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err == nil {
			mem[0] = 1
			err = unix.Munmap(mem)
		}
		if err != nil {
			panic(fmt.Sprintf("probe mapping: %v", err))
		}
		raise(&p.mmap, time.Since(start))
		time.Sleep(time.Millisecond)
	}
}

// probe reads and clears the child's wait probe.
func (c *child) probe(t *testing.T) probeWaits {
	t.Helper()
	if _, err := fmt.Fprintln(c.in, "PROBE"); err != nil {
		t.Fatalf("child %d: %v", c.pid(), err)
	}
	w, err := parseProbeLine(c.line(t, "PROBE"))
	if err != nil {
		t.Fatalf("child %d: %v", c.pid(), err)
	}
	return w
}

// TestWaitProbeSeesAStoppedProcess checks the touch probe can show a long
// wait: a child held still with SIGSTOP for stopFor has a gap of at least
// that long between two touches, whatever the machine's load (a stop only
// lengthens a gap, and the gaps cover the time without a hole). The stop is
// counted from when every thread of the child is seen stopped: a thread stops
// only when it next runs after the signal is sent, which can be a
// few milliseconds later, while SIGCONT wakes it as it is sent. The mapping
// probe times its calls only, not its sleeps, which a stop most likely
// falls in; the benchmark's migrate_pages(2) rows, a call that holds the
// mmap lock throughout, show it waiting as long as the call
// (docs/benchmarks.md).
func TestWaitProbeSeesAStoppedProcess(t *testing.T) {
	const mb = 8
	c := startChild(t, childSpec{mb: mb, bind: -1, threads: 1, probe: true})
	const stopFor = 300 * time.Millisecond
	sweep := int64(mb << 20 / 4096) // touches in one pass over the memory
	running := probeUntil(t, c, 1)
	if err := c.cmd.Process.Signal(unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitAllStopped(t, c.pid())
	time.Sleep(stopFor)
	if err := c.cmd.Process.Signal(unix.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// A pass publishes its count when it ends: two passes' worth after the
	// stop means a whole pass ran after it, and the first touch after the
	// stop, which records the gap across it, came before that pass's end.
	stopped := probeUntil(t, c, 2*sweep)
	if stopped.Gap < stopFor {
		t.Errorf("held still %v, the probe saw a longest touch gap of %v: want at least the stop", stopFor, stopped.Gap)
	}
	t.Logf("running: %+v; stopped %v: %+v", running, stopFor, stopped)
}

// waitAllStopped returns once every thread of pid is in the stopped state
// ('T' in its stat), polling every 100µs; a minute without it fails the test.
func waitAllStopped(t *testing.T, pid int) {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	for deadline := time.Now().Add(time.Minute); ; {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		stopped := 0
		for _, task := range tasks {
			if taskState(t, dir+"/"+task.Name()+"/stat") == 'T' {
				stopped++
			}
		}
		if stopped == len(tasks) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d: %d of %d threads stopped a minute after SIGSTOP", pid, stopped, len(tasks))
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// taskState is the state letter of one thread's stat file: the field after
// the command name, which ends at the line's last ')'.
func taskState(t *testing.T, path string) byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		t.Fatalf("%s: no state after the command name in %q", path, b)
	}
	return b[i+2]
}

// probeUntil reads the child's probe until it has counted at least touches
// touches since the last read, and returns the longest waits over those
// reads. It is not timed: a busy machine only makes it wait longer, up to a
// minute that ends a test whose child never touches its memory at all.
func probeUntil(t *testing.T, c *child, touches int64) probeWaits {
	t.Helper()
	var sum probeWaits
	for deadline := time.Now().Add(time.Minute); sum.Touches < touches; {
		if time.Now().After(deadline) {
			t.Fatalf("the child's probe counted %d touches in a minute, want %d", sum.Touches, touches)
		}
		time.Sleep(10 * time.Millisecond)
		w := c.probe(t)
		sum.Gap, sum.Access, sum.Mmap = max(sum.Gap, w.Gap), max(sum.Access, w.Access), max(sum.Mmap, w.Mmap)
		sum.Touches += w.Touches
	}
	return sum
}

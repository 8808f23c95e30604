//go:build linux

package locality

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/stress"
)

// The tests re-run their own binary as a child process that holds memory
// where a test wants it. The child is configured through the environment:
const (
	envChild   = "LOCALITY_TEST_CHILD"    // "1": run as the child
	envMB      = "LOCALITY_CHILD_MB"      // MiB to allocate and fill
	envBind    = "LOCALITY_CHILD_BIND"    // node to allocate on (set_mempolicy), or empty
	envCPUs    = "LOCALITY_CHILD_CPUS"    // CPU list to pin every thread to, or empty
	envThreads = "LOCALITY_CHILD_THREADS" // threads that keep touching the memory
	envSpin    = "LOCALITY_CHILD_SPIN"    // "1": burn CPU without touching the memory
	envHuge    = "LOCALITY_CHILD_HUGE"    // "no": madvise(MADV_NOHUGEPAGE), "yes": MADV_HUGEPAGE
	envShared  = "LOCALITY_CHILD_SHARED"  // "<file>:<MiB>": also map that file shared and fill it
)

// It prints "READY <addr> <bytes> <checksum> <shared addr or 0>", then answers each "SUM" line
// on stdin with "SUM <checksum>" computed afresh and each "PROBE" line with
// the wait probe's reading (probe_test.go), and exits at end of input.
func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		if err := childMain(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func childMain() error {
	if list := os.Getenv(envCPUs); list != "" {
		if err := pinAllThreads(list); err != nil {
			return err
		}
	}
	mb, _ := strconv.Atoi(os.Getenv(envMB))
	bind := -1
	if b := os.Getenv(envBind); b != "" {
		bind, _ = strconv.Atoi(b)
	}
	mem, err := allocFilled(mb<<20, bind, os.Getenv(envHuge))
	if err != nil {
		return err
	}
	sum := stress.Checksum(mem)
	threads, _ := strconv.Atoi(os.Getenv(envThreads))
	probe := &waitProbe{}
	for i := 0; i < threads; i++ {
		if i == 0 && os.Getenv(envProbe) == "1" {
			go keepTouchingTimed(mem, i, threads, probe)
			go keepMapping(probe)
			continue
		}
		go keepTouching(mem, i, threads)
	}
	if os.Getenv(envSpin) == "1" {
		go spinForever() // NUMA balancing samples a task's memory on its CPU time
	}
	var addr uintptr
	if len(mem) > 0 {
		addr = uintptr(unsafe.Pointer(&mem[0]))
	}
	shared, err := mapShared(os.Getenv(envShared), bind)
	if err != nil {
		return err
	}
	fmt.Printf("READY %x %d %d %x\n", addr, len(mem), sum, shared)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "SUM":
			fmt.Printf("SUM %d\n", stress.Checksum(mem))
		case "PROBE":
			fmt.Println(probe.read().line())
		}
	}
	return nil
}

// allocFilled maps and fills size bytes; with bind >= 0 the page faults
// happen under a thread policy binding them to that node, which is then reset
// so numa_maps shows the default policy (a plain process whose memory
// happens to be remote).
func allocFilled(size, bind int, huge string) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if bind >= 0 {
		mask := uint64(1) << bind
		if _, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, 2 /* MPOL_BIND */, uintptr(unsafe.Pointer(&mask)), 65); e != 0 {
			return nil, fmt.Errorf("set_mempolicy bind %d: %w", bind, e)
		}
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err == nil && huge != "" {
		advice := unix.MADV_HUGEPAGE
		if huge == "no" {
			advice = unix.MADV_NOHUGEPAGE
		}
		err = unix.Madvise(mem, advice)
	}
	if err == nil {
		stress.Fill(mem, 42)
	}
	if bind >= 0 {
		if _, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, 0 /* MPOL_DEFAULT */, 0, 0); e != 0 && err == nil {
			err = fmt.Errorf("set_mempolicy default: %w", e)
		}
	}
	return mem, err
}

// mapShared maps spec's file ("<file>:<MiB>", created if need be) shared and
// writes every page under the bind policy, so the first child to touch a
// page places it; it returns the mapping's address, 0 without spec.
func mapShared(spec string, bind int) (uintptr, error) {
	if spec == "" {
		return 0, nil
	}
	path, mbText, _ := strings.Cut(spec, ":")
	size := atoi(mbText) << 20
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if bind >= 0 {
		mask := uint64(1) << bind
		if _, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, 2 /* MPOL_BIND */, uintptr(unsafe.Pointer(&mask)), 65); e != 0 {
			return 0, fmt.Errorf("set_mempolicy bind %d: %w", bind, e)
		}
		defer unix.Syscall(unix.SYS_SET_MEMPOLICY, 0 /* MPOL_DEFAULT */, 0, 0)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	for off := 0; off < size; off += 4096 {
		mem[off] = 1
	}
	return uintptr(unsafe.Pointer(&mem[0])), nil
}

// keepTouching reads every page of its share and writes the byte back, so
// the process stays busy on its memory while it migrates.
func keepTouching(mem []byte, i, n int) {
	runtime.LockOSThread()
	lo, hi := len(mem)*i/n, len(mem)*(i+1)/n
	for {
		for off := lo; off < hi; off += 4096 {
			mem[off] = same(mem[off])
		}
		time.Sleep(time.Millisecond)
	}
}

func spinForever() {
	for x := uint64(1); ; x = x*6364136223846793005 + 1 {
		if x == 0 {
			runtime.Gosched()
		}
	}
}

// same hides the write-back of an unchanged byte from the compiler.
//
//go:noinline
func same(b byte) byte { return b }

func pinAllThreads(list string) error {
	cpus, err := cpuset.Parse(list)
	if err != nil {
		return err
	}
	var set unix.CPUSet
	for _, c := range cpus.List() {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("pin thread %d to %s: %w", tid, list, err)
		}
	}
	return nil
}

// child is a running child process.
type child struct {
	cmd    *exec.Cmd
	shared uintptr // the shared file's mapping, or 0
	in     *os.File
	out    *bufio.Scanner
	addr   uintptr
	bytes  int
	sum    uint64
}

type childSpec struct {
	mb, threads int
	spin        bool
	probe       bool   // time the first thread's touches and map memory beside it (probe_test.go)
	huge        string // "no" or "yes": madvise the region against or for huge pages
	shared      string // "<file>:<MiB>": a file both this child and others map shared
	bind        int    // -1: no binding
	cpus        string
}

// startChild starts a child and waits for its READY line. It is killed and
// reaped when the test ends.
func startChild(t *testing.T, spec childSpec) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	bind := ""
	if spec.bind >= 0 {
		bind = strconv.Itoa(spec.bind)
	}
	cmd.Env = append(os.Environ(), envChild+"=1", envMB+"="+strconv.Itoa(spec.mb), envBind+"="+bind,
		envCPUs+"="+spec.cpus, envThreads+"="+strconv.Itoa(spec.threads))
	if spec.spin {
		cmd.Env = append(cmd.Env, envSpin+"=1")
	}
	if spec.probe {
		cmd.Env = append(cmd.Env, envProbe+"=1")
	}
	if spec.huge != "" {
		cmd.Env = append(cmd.Env, envHuge+"="+spec.huge)
	}
	if spec.shared != "" {
		cmd.Env = append(cmd.Env, envShared+"="+spec.shared)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: stdin.(*os.File), out: bufio.NewScanner(stdout)}
	t.Cleanup(func() { c.kill() })
	t.Cleanup(func() { c.logRemote(t) }) // runs first: the child still lives
	f := c.line(t, "READY")
	if len(f) != 5 {
		t.Fatalf("child %d: READY line %v", cmd.Process.Pid, f)
	}
	a, _ := strconv.ParseUint(f[1], 16, 64)
	c.addr = uintptr(a)
	c.bytes, _ = strconv.Atoi(f[2])
	c.sum, _ = strconv.ParseUint(f[3], 10, 64)
	sh, _ := strconv.ParseUint(f[4], 16, 64)
	c.shared = uintptr(sh)
	return c
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) line(t *testing.T, word string) []string {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("child %d ended before %s: %v", c.pid(), word, c.out.Err())
	}
	f := strings.Fields(c.out.Text())
	if len(f) == 0 || f[0] != word {
		t.Fatalf("child %d: got %q, want %s", c.pid(), c.out.Text(), word)
	}
	return f
}

// checksum asks the running child to checksum its memory again.
func (c *child) checksum(t *testing.T) uint64 {
	t.Helper()
	if _, err := fmt.Fprintln(c.in, "SUM"); err != nil {
		t.Fatalf("child %d: %v", c.pid(), err)
	}
	f := c.line(t, "SUM")
	n, _ := strconv.ParseUint(f[1], 10, 64)
	return n
}

// logRemote logs, when the test failed, the child's mappings that still
// have pages on node 1 (every test here moves pages off node 1): which
// memory stayed behind says why.
func (c *child) logRemote(t *testing.T) {
	if !t.Failed() || c.cmd.ProcessState != nil {
		return
	}
	text, err := os.ReadFile(fmt.Sprintf("/proc/%d/numa_maps", c.pid()))
	if err != nil {
		t.Logf("child %d: %v", c.pid(), err)
		return
	}
	var lines []string
	for _, l := range strings.Split(string(text), "\n") {
		if strings.Contains(l, " N1=") {
			lines = append(lines, l)
		}
	}
	t.Logf("child %d: %d mappings with pages on node 1:\n%s", c.pid(), len(lines), strings.Join(lines, "\n"))
}

// kill ends the child and reaps it, so its pid is gone (not a zombie).
func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	}
}

// regionNodes asks the kernel where every page of the child's region is.
func (c *child) regionNodes(t *testing.T) map[int32]int {
	t.Helper()
	out := map[int32]int{}
	for off := 0; off < c.bytes; off += queryChunk * 4096 {
		n := min(queryChunk, (c.bytes-off)/4096)
		addrs, status := make([]uintptr, n), make([]int32, n)
		for i := range addrs {
			addrs[i] = c.addr + uintptr(off+i*4096)
		}
		if err := queryPages(c.pid(), addrs, status); err != nil {
			t.Fatalf("query child %d: %v", c.pid(), err)
		}
		for _, st := range status {
			out[st]++
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

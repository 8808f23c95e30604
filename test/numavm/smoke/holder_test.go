package smoke

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// regionSize is the memory each placement test allocates and moves.
const regionSize = 64 << 20

// holdEnv makes the test binary, re-executed, act as a holder process instead
// of running tests (see TestMain).
const holdEnv = "NUMAVM_SMOKE_HOLD"

func TestMain(m *testing.M) {
	if os.Getenv(holdEnv) == "1" {
		if err := hold(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "holder:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hold waits for "alloc", maps and touches regionSize bytes under whatever
// policy or cpuset the process has by then, prints the region's address and
// keeps it until stdin closes. Waiting first lets the parent move it into a
// cgroup before any page exists.
func hold(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	if line, err := r.ReadString('\n'); err != nil || strings.TrimSpace(line) != "alloc" {
		return fmt.Errorf("want \"alloc\" on stdin, got %q (%v)", line, err)
	}
	buf, err := mapTouched(regionSize)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%#x\n", uintptr(unsafe.Pointer(&buf[0])))
	_, _ = io.Copy(io.Discard, r)
	return nil
}

// mapTouched maps anonymous memory and writes every page, so every page exists
// and is placed by the current policy.
func mapTouched(size int) ([]byte, error) {
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	touch(buf)
	return buf, nil
}

func touch(buf []byte) {
	ps := unix.Getpagesize()
	for i := 0; i < len(buf); i += ps {
		buf[i] = 1
	}
}

// holder is a running holder process.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	pid   int
	addrs []uintptr
}

// startHolder starts this test binary as a holder, wrapped by wrapper (for
// example numactl --membind=1 --), and stops it when the test ends.
func startHolder(t *testing.T, wrapper ...string) *holder {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append([]string{}, wrapper...), self)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), holdEnv+"=1")
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
		t.Fatalf("start holder %v: %v", argv, err)
	}
	h := &holder{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), pid: cmd.Process.Pid}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("holder %v: %v", argv, err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("holder %v did not exit when its stdin closed", argv)
		}
	})
	return h
}

// alloc tells the holder to allocate and records its pages' addresses.
func (h *holder) alloc(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(h.stdin, "alloc\n"); err != nil {
		t.Fatal(err)
	}
	line, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("holder %d printed no address: %v", h.pid, err)
	}
	var start uintptr
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "0x%x", &start); err != nil {
		t.Fatalf("holder %d printed %q, want an address", h.pid, line)
	}
	h.addrs = pageAddrs(start, regionSize)
}

// waitOnNode queries where pid's pages are until all are on node, and fails
// with the last placement after a few seconds. A move may answer EBUSY for
// pages the kernel is still migrating; a later query shows them moved.
func waitOnNode(t *testing.T, pid int, addrs []uintptr, node int) {
	t.Helper()
	var last map[int]int
	for deadline := time.Now().Add(5 * time.Second); ; {
		status, err := movePages(pid, addrs, -1)
		if err != nil {
			t.Fatal(err)
		}
		last = histogram(status)
		if last[node] == len(addrs) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: want all %d pages on node %d, pages per node (negative: errno) %v",
				pid, len(addrs), node, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

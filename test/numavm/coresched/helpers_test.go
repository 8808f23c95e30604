package coresched

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/test/numavm/reexec"
)

// workerEnv makes the test binary, re-executed, act as a workload process
// instead of running tests (see TestMain): a Go program, so it has several
// threads, that forks a child on request.
const workerEnv = "NUMAVM_CORESCHED_WORKER"

func TestMain(m *testing.M) {
	reexec.Main(m, workerEnv, "worker", func() error { return work(os.Stdin, os.Stdout) })
}

// work starts `sleep 3600` and prints its pid for every "fork" line on in,
// until in closes.
func work(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() != "fork" {
			return fmt.Errorf("want \"fork\", got %q", sc.Text())
		}
		c := exec.Command("sleep", "3600")
		if err := c.Start(); err != nil {
			return err
		}
		fmt.Fprintln(out, c.Process.Pid)
	}
	return sc.Err()
}

// worker is a running worker process.
type worker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startWorker(t *testing.T) *worker {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &worker{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// fork has the worker start a child and returns its pid.
func (w *worker) fork(t *testing.T) int {
	t.Helper()
	if _, err := io.WriteString(w.in, "fork\n"); err != nil {
		t.Fatal(err)
	}
	line, err := w.out.ReadString('\n')
	if err != nil {
		t.Fatalf("worker: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("worker printed %q, not a pid", line)
	}
	t.Cleanup(func() { _ = unix.Kill(pid, unix.SIGKILL) })
	return pid
}

// start runs a command in the background, killed when the test ends.
func start(t *testing.T, argv ...string) int {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// cookie reads a thread's core scheduling cookie with its own prctl, not
// pkg/coresched's, so a fault there cannot hide itself.
func cookie(tid int) (uint64, error) {
	var c uint64
	err := unix.Prctl(unix.PR_SCHED_CORE, unix.PR_SCHED_CORE_GET, uintptr(tid),
		unix.PR_SCHED_CORE_SCOPE_THREAD, uintptr(unsafe.Pointer(&c)))
	if err != nil {
		return 0, fmt.Errorf("PR_SCHED_CORE_GET of thread %d: %w", tid, err)
	}
	return c, nil
}

// threadCookies reads the cookie of every thread of the processes, keyed
// "pid/tid".
func threadCookies(pids []int) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, pid := range pids {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			c, err := cookie(tid)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprintf("%d/%d", pid, tid)] = c
		}
	}
	return out, nil
}

// shared says whether every thread has one and the same nonzero cookie,
// and which.
func shared(cs map[string]uint64) (uint64, bool) {
	var ref uint64
	for _, c := range cs {
		if c == 0 || (ref != 0 && c != ref) {
			return 0, false
		}
		ref = c
	}
	return ref, ref != 0
}

// none says whether no thread has a cookie.
func none(cs map[string]uint64) bool {
	for _, c := range cs {
		if c != 0 {
			return false
		}
	}
	return true
}

// waitFor polls cond until it holds or the deadline passes, then fails with
// what describe says of the last state. TCG makes the guest slow, so the
// deadline is generous.
func waitFor(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still not %s: %s", d, what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// makeCgroup creates a cgroup under the v2 root and moves the processes
// into it; when the test ends, whatever runs there is killed and the cgroup
// removed.
func makeCgroup(t *testing.T, name string, pids ...int) string {
	t.Helper()
	dir := filepath.Join("/sys/fs/cgroup", name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644)
		for range 50 {
			if err := os.Remove(dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	for _, p := range pids {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(p)), 0o644); err != nil {
			t.Fatalf("move pid %d into %s: %v", p, dir, err)
		}
	}
	return dir
}

// forceIdleSum is /proc/PID/sched's core_forceidle_sum in milliseconds: how
// long the task ran while an SMT sibling of its CPU was forced idle (counted
// only with kernel.sched_schedstats=1).
func forceIdleSum(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/sched", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "core_forceidle_sum" {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("/proc/%d/sched: core_forceidle_sum %q: %v", pid, v, err)
			}
			return f
		}
	}
	t.Fatalf("/proc/%d/sched has no core_forceidle_sum (kernel without CONFIG_SCHED_CORE or schedstats?)", pid)
	return 0
}

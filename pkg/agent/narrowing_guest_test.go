package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// TestGuestNarrowingMigratesInsideTheWrite pins down what the decision's
// Observation.NarrowingMigrates stands for, on the real cgroup v2 kernel of
// the 4-node boot: narrowing a cgroup's cpuset.mems returns only once the
// kernel has migrated what its processes map on the nodes dropped (their
// own memory on node 0 is gone after the write), and how long that write
// takes for a workload idle and for one keeping a CPU busy, with what was
// left on node 0 (numa_maps: anonymous pages, file pages, and file pages
// other processes map too) at the write. A write not back within
// narrowWait is reported with the kernel stacks of the workload's threads
// and of the kernel's workers, and the cases after it are not run: the
// kernel's migration work queue is ordered, so every later narrowing
// would wait behind it. It runs after the moves tests, for that reason.
func TestGuestNarrowingMigratesInsideTheWrite(t *testing.T) {
	parent, _ := fourNodeGuest(t)
	root := filepath.Join(cgroup.DefaultRoot, parent)
	mkdirT(t, root)
	mustWrite(t, root, "cgroup.subtree_control", "+cpuset +memory")
	for _, c := range []struct {
		name       string
		busy       bool
		ownMoved   bool // `locus migrate` moved its own pages first, as the worker does
		mustFinish bool // the write must return within narrowWait
	}{
		{name: "idle", mustFinish: true},
		{name: "busy-own-moved", busy: true, ownMoved: true},
		{name: "busy", busy: true},
	} {
		cg := filepath.Join(root, c.name)
		done, took, left := narrowOnce(t, cg, c.busy, c.ownMoved)
		if !done {
			t.Logf("FINDING narrowing %s: not back after %v; %s", c.name, took, left)
			if c.mustFinish {
				t.Errorf("narrowing %s did not return within %v", c.name, took)
			}
			return
		}
		t.Logf("FINDING narrowing %s: returned after %.2f s; %s", c.name, took.Seconds(), left)
	}
}

// narrowWait is how long a narrowing write may take before the test looks
// at where everything is and gives up on it.
const narrowWait = 3 * time.Minute

// narrowOnce starts `locus stress` (burning a CPU when busy) in cg with CPU
// 1 and NUMA node 0, waits for its memory, moves its CPUs to CPU 2 (node 1)
// with cpuset.mems 0-1, optionally moves its own pages with `locus
// migrate`, then narrows cpuset.mems to 1 and times the write.
func narrowOnce(t *testing.T, cg string, busy, ownMoved bool) (done bool, took time.Duration, left string) {
	t.Helper()
	mkdirT(t, cg)
	mustWrite(t, cg, "cpuset.cpus", "1")
	mustWrite(t, cg, "cpuset.mems", "0")
	fd, err := syscall.Open(cg, syscall.O_DIRECTORY|syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	args := []string{"stress", "--memory", "8Mi", "--verify", "--touch-interval", touchInterval}
	if busy {
		args = append(args, "--cpu", "1")
	}
	cmd := exec.Command(guestLocus, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); go func() { _ = cmd.Wait() }() })
	pollUntil(t, 2*time.Minute, filepath.Base(cg)+"'s 8 MiB resident", func() bool { return anonBytes(cg, -1) >= 8<<20 })
	mustWrite(t, cg, "cpuset.cpus", "2")
	mustWrite(t, cg, "cpuset.mems", "0-1")
	if ownMoved {
		out, err := exec.Command(guestLocus, "migrate", "--pid", strconv.Itoa(pid), "--to", "1", "--budget-ms", "20").CombinedOutput()
		t.Logf("%s: locus migrate: %v %s", filepath.Base(cg), err, strings.TrimSpace(string(out)))
	}
	left = fmt.Sprintf("at the write, %s on node 0; its cgroup's anon on node 0 %d bytes", onNode0(pid), anonBytes(cg, 0))
	wrote := make(chan error, 1)
	start := time.Now()
	go func() { wrote <- os.WriteFile(filepath.Join(cg, "cpuset.mems"), []byte("1"), 0o644) }()
	select {
	case err := <-wrote:
		took = time.Since(start)
		if err != nil {
			t.Fatalf("narrowing %s: %v", cg, err)
		}
		if anon := anonBytes(cg, 0); anon > 64<<10 {
			t.Errorf("%s: %d bytes of anon still on node 0 after the narrowing returned, want it migrated", filepath.Base(cg), anon)
		}
		return true, took, left
	case <-time.After(narrowWait):
		return false, time.Since(start), left + "; then " + whereNarrowingWaits(pid, anonBytes(cg, 0))
	}
}

// onNode0 sums a process's numa_maps pages on node 0 by kind. numa_maps
// takes the process's mmap lock, which a stuck migration may hold: it is
// read with a bound.
func onNode0(pid int) string {
	got := make(chan string, 1)
	go func() {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/numa_maps", pid))
		if err != nil {
			got <- err.Error()
			return
		}
		var anon, file, shared int
		for _, line := range strings.Split(string(raw), "\n") {
			n := 0
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "N0="); ok {
					n, _ = strconv.Atoi(v)
				}
			}
			switch {
			case n == 0:
			case !strings.Contains(line, " file="):
				anon += n
			default:
				file += n
				if !strings.Contains(line, "mapmax=1 ") && strings.Contains(line, "mapmax=") {
					shared += n
				}
			}
		}
		got <- fmt.Sprintf("numa_maps: %d anonymous pages, %d file pages (%d of them in mappings other processes share)", anon, file, shared)
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(10 * time.Second):
		return "numa_maps not read within 10 s (its mmap lock held)"
	}
}

// whereNarrowingWaits is the states and kernel stacks of the workload's
// threads and of the kernel's workers (a worker running on a CPU shows no
// stack; its CPU time, read twice, says whether it spins), and the anon
// left on node 0.
func whereNarrowingWaits(pid int, anon uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "anon on node 0 now %d bytes", anon)
	dump := func(task string) {
		stat, _ := os.ReadFile(filepath.Join(task, "stat"))
		comm, _ := os.ReadFile(filepath.Join(task, "comm"))
		stack, _ := os.ReadFile(filepath.Join(task, "stack"))
		_, after, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(after)
		if len(f) > 13 {
			fmt.Fprintf(&b, "\n%s (%s) state %s utime %s stime %s:\n%s", task, strings.TrimSpace(string(comm)), f[0], f[11], f[12], stack)
		}
	}
	threads, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range threads {
		dump(task)
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "State") || strings.HasPrefix(line, "Vm") || strings.HasPrefix(line, "Rss") || strings.HasPrefix(line, "voluntary") || strings.HasPrefix(line, "nonvoluntary") {
			b.WriteString("\n" + line)
		}
	}
	for round := 0; round < 2; round++ {
		fmt.Fprintf(&b, "\nkernel workers, look %d:", round+1)
		tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*")
		for _, task := range tasks {
			comm, _ := os.ReadFile(filepath.Join(task, "comm"))
			stack, _ := os.ReadFile(filepath.Join(task, "stack"))
			stat, _ := os.ReadFile(filepath.Join(task, "stat"))
			_, after, _ := strings.Cut(string(stat), ") ")
			if strings.Contains(string(comm), "+") || strings.HasPrefix(after, "D") || strings.HasPrefix(after, "R") ||
				strings.Contains(string(stack), "migrat") {
				dump(task)
			}
		}
		time.Sleep(5 * time.Second)
	}
	return b.String()
}

// anonBytes is a cgroup's anonymous memory on node (-1: on all) as its
// memory.numa_stat says, 0 when unread.
func anonBytes(cg string, node int) uint64 {
	raw, err := os.ReadFile(filepath.Join(cg, "memory.numa_stat"))
	if err != nil {
		return 0
	}
	byNode, err := cgroup.ParseNumaStat(string(raw), []string{"anon"}, 1)
	if err != nil {
		return 0
	}
	var sum uint64
	for n, b := range byNode {
		if node < 0 || n == node {
			sum += b
		}
	}
	return sum
}

// mkdirT makes a cgroup of the test's sub-tree.
func mkdirT(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// mustWrite writes value to a file of a cgroup of the test's sub-tree.
func mustWrite(t *testing.T, dir, file, value string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		t.Fatalf("write %s to %s: %v", value, filepath.Join(dir, file), err)
	}
}

func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %v", what, d)
}

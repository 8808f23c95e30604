package guest

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/locality"
)

const (
	cgRoot     = "/sys/fs/cgroup"
	guestLocus = "/usr/bin/locus"
)

// inGuest skips outside the NUMA test guest and fails inside it when the
// guest lacks what the test needs (two nodes, cgroup v2, locus).
func inGuest(t *testing.T) {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("needs the NUMA test guest: bash test/numavm/run.sh --pkgs ./pkg/balancer/guest")
	}
	if os.Getenv("LOCUS_NUMAVM_CGROUP") == "v1" {
		t.Skip("the guest booted with cgroup v1 controllers (--cgroup v1); these tests build a v2 sub-tree")
	}
	if nodes, err := locality.MemoryNodes(""); err != nil || len(nodes) != 2 {
		t.Fatalf("want two memory nodes in the guest, found %v (%v)", nodes, err)
	}
	if _, err := os.Stat(guestLocus); err != nil {
		t.Fatal(err)
	}
}

// subtree creates a cgroup of the test's own with cpuset, cpu, memory and
// pids handed down, and removes it (its processes killed) at cleanup.
func subtree(t *testing.T) string {
	t.Helper()
	test := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "/", "-")
	name := fmt.Sprintf("locus-balancer-%d-%s", os.Getpid(), test)
	dir := filepath.Join(cgRoot, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(t, dir) })
	writeFile(t, filepath.Join(dir, "cgroup.subtree_control"), "+cpuset +cpu +memory +pids")
	return name
}

func removeTree(t *testing.T, dir string) {
	var dirs []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.WriteFile(filepath.Join(dirs[i], "cgroup.kill"), []byte("1"), 0o644)
		for range 50 {
			if err := os.Remove(dirs[i]); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("could not remove %s", dir)
	}
}

func writeFile(t *testing.T, path, val string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(val), 0o644); err != nil {
		t.Fatalf("write %s = %q: %v", path, val, err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// group is a cgroup of the sub-tree running one command.
type group struct {
	rel string // relative to the cgroup root
	cmd *exec.Cmd
	out bytes.Buffer
}

// start makes cgroup parent/name with the given cpus, and runs argv in it:
// the shell enters the cgroup before exec, so the command's memory is
// first touched on the CPUs given.
func start(t *testing.T, parent, name, cpus string, argv ...string) *group {
	t.Helper()
	g := &group{rel: parent + "/" + name}
	dir := filepath.Join(cgRoot, g.rel)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "cpuset.cpus"), cpus)
	g.cmd = exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(dir, "cgroup.procs")}, argv...)...)
	g.cmd.Stdout, g.cmd.Stderr = &g.out, &g.out
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		_ = g.cmd.Wait()
	})
	return g
}

// join runs one more command in the group's cgroup.
func join(t *testing.T, g *group, argv ...string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(g.dir(), "cgroup.procs")}, argv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
}

func (g *group) dir() string { return filepath.Join(cgRoot, g.rel) }

func (g *group) file(t *testing.T, name string) string {
	return readFile(t, filepath.Join(g.dir(), name))
}

// mem is the group's anonymous and shared memory by node, in bytes (the
// guest runs cgroup v2), as the balancer counts it.
func (g *group) mem(t *testing.T) map[int]uint64 {
	t.Helper()
	m, err := cgroup.ParseNumaStat(g.file(t, "memory.numa_stat"), []string{"anon", "shmem"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// localPercent is the share of its anonymous memory on node.
func (g *group) localPercent(t *testing.T, node int) float64 {
	m := g.mem(t)
	var total uint64
	for _, b := range m {
		total += b
	}
	if total == 0 {
		return 0
	}
	return 100 * float64(m[node]) / float64(total)
}

// usage is the group's CPU time so far.
func (g *group) usage(t *testing.T) time.Duration {
	t.Helper()
	for _, line := range strings.Split(g.file(t, "cpu.stat"), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "usage_usec" {
			us, _ := strconv.ParseInt(f[1], 10, 64)
			return time.Duration(us) * time.Microsecond
		}
	}
	t.Fatalf("%s: no usage_usec", g.rel)
	return 0
}

func (g *group) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(-g.cmd.Process.Pid, sig); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond every 250 ms until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	begin := time.Now()
	for {
		ok, state := cond()
		if ok {
			return time.Since(begin)
		}
		if time.Since(begin) > within {
			t.Fatalf("%s: not within %s; last: %s", what, within, state)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// logWriter collects the agent's log for a failing test.
type logWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *logWriter) logger() *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func (w *logWriter) dump(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.Failed() {
		t.Logf("agent log:\n%s", w.buf.String())
	}
}

var _ io.Writer = (*logWriter)(nil)

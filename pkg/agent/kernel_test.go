package agent

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/procfs"
)

var v1Controllers = []string{"cpuset", "memory", "cpu", "cpuacct"}

// realV1 skips unless this is root on a host with cgroup v1 cpusets and at
// least two CPUs, and returns a cgroup parent of the test's own that is
// removed at cleanup (its processes killed, children first).
func realV1(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("real-kernel test needs root")
	}
	if v, err := cgroup.Detect(cgroup.DefaultRoot); err != nil || v != cgroup.V1 {
		t.Skip("host has no cgroup v1 hierarchy at /sys/fs/cgroup")
	}
	if cpus, _ := os.ReadFile("/sys/fs/cgroup/cpuset/cpuset.cpus"); strings.TrimSpace(string(cpus)) == "0" {
		t.Skip("needs at least two CPUs")
	}
	parent := fmt.Sprintf("locus-test-%d-%s", os.Getpid(), strings.ToLower(strings.TrimPrefix(t.Name(), "Test")))
	t.Cleanup(func() { removeTree(t, parent) })
	return parent
}

// realV1Agent is an agent on this host's cgroup v1 reading a HostConfig
// file that holds cfg, closed when the test ends (before realV1's sub-tree
// goes), and write, which replaces the file as the next reconcile will see it.
func realV1Agent(t *testing.T, cfg string) (a *Agent, write func(cfg string)) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "host.yaml")
	write = func(cfg string) {
		t.Helper()
		if err := writeSettled(file, []byte(cfg)); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg)
	a, err := New(Options{ConfigFile: file, StateDir: filepath.Join(dir, "state"), CgroupVersion: cgroup.V1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StopGrace: 2e9})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, write
}

// removeTree kills what is left in the test's v1 sub-tree and removes it.
func removeTree(t *testing.T, parent string) {
	for _, c := range v1Controllers {
		removeDirs(t, filepath.Join(cgroup.DefaultRoot, c, parent))
	}
}

// removeDirs kills the processes of every cgroup under root and removes the
// cgroups, deepest first; rmdir is retried while killed tasks leave.
func removeDirs(t *testing.T, root string) {
	var dirs []string
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(b)) {
				var pid int
				fmt.Sscan(f, &pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		for i := 0; i < 300; i++ {
			if err := syscall.Rmdir(d); err == nil || err == syscall.ENOENT {
				break
			}
			syscall.Nanosleep(&syscall.Timespec{Nsec: 10e6}, nil)
		}
		if _, err := os.Stat(d); err == nil {
			t.Errorf("could not remove test cgroup %s", d)
		}
	}
}

// cpusAllowed reads Cpus_allowed_list of a process.
func cpusAllowed(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return ""
}

func readCg(t *testing.T, ctrl, rel, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cgroup.DefaultRoot, ctrl, rel, file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestRealKernelV1(t *testing.T) {
	parent := realV1(t)
	cfg := fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
cgroupParent: %s
workloads:
- name: ls
  command: [sleep, "600"]
  qosClass: LS
  resources: {limits: {cpu: "1", memory: 64Mi}}
  annotations: {cpuset-scheduler: "true"}
- name: be
  command: [sleep, "600"]
  qosClass: BE
`, parent)
	parentCPUs := readCg(t, "cpuset", "", "cpuset.cpus")
	a, write := realV1Agent(t, cfg)
	if res := a.Reconcile(); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	ck, _ := a.store.Load()
	excl := ck.Assignments["ls"].CPUs
	if excl.Size() != 1 {
		t.Fatalf("ls assigned %q, want one CPU", excl)
	}
	all, _ := cpuset.Parse(parentCPUs)
	shared := all.Difference(excl).String()
	for name, want := range map[string]string{"ls": excl.String(), "be": shared} {
		p := ck.Workloads[name].Started
		if p == nil {
			t.Fatalf("%s not started", name)
		}
		rel := parent + "/" + name
		waitFor(t, func() bool { c, _ := procfs.New("").Comm(p.PID); return c == "sleep" })
		if got := cpusAllowed(t, p.PID); got != want {
			t.Errorf("%s: process %d Cpus_allowed_list = %s, want %s", name, p.PID, got, want)
		}
		if got := readCg(t, "cpuset", rel, "cpuset.cpus"); got != want {
			t.Errorf("%s: cpuset.cpus = %s, want %s", name, got, want)
		}
		for _, c := range v1Controllers {
			if procs := readCg(t, c, rel, "cgroup.procs"); procs != fmt.Sprint(p.PID) {
				t.Errorf("%s: %s cgroup.procs = %q, want the started pid %d", name, c, procs, p.PID)
			}
		}
	}
	if res := a.Reconcile(); res.Writes != 0 || len(res.Errors) > 0 {
		t.Errorf("second reconcile: %d writes, errors %v", res.Writes, res.Errors)
	}

	// Dropping ls stops it, removes its cgroup everywhere, and gives its CPU
	// back to the shared pool.
	lsPID := ck.Workloads["ls"].Started
	cfg = cfg[:strings.Index(cfg, "- name: ls")] + cfg[strings.Index(cfg, "- name: be"):]
	write(cfg)
	if res := a.Reconcile(); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if procfs.New("").Alive(lsPID.PID, lsPID.StartTime) {
		t.Error("removed workload's process still runs")
	}
	for _, c := range v1Controllers {
		if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, c, parent, "ls")); !os.IsNotExist(err) {
			t.Errorf("%s cgroup of ls not removed: %v", c, err)
		}
	}
	if got := readCg(t, "cpuset", parent+"/be", "cpuset.cpus"); got != parentCPUs {
		t.Errorf("be cpuset.cpus = %s, want every CPU %s once ls is gone", got, parentCPUs)
	}

	// Dropping everything removes the whole sub-tree Locus created.
	write(cfg[:strings.Index(cfg, "workloads:")] + "workloads: []\n")
	if res := a.Reconcile(); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	for _, c := range v1Controllers {
		if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, c, parent)); !os.IsNotExist(err) {
			t.Errorf("%s: created parent %s not removed: %v", c, parent, err)
		}
	}
}

package smoke

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// cgroupMode is what differs between the guest's two cgroup layouts for a
// cpuset that spans NUMA nodes.
type cgroupMode struct {
	cpusetRoot string // hierarchy holding cpuset
	magic      int64  // filesystem type of cpusetRoot
	effective  string // file naming the nodes a cpuset may really use
	// prepare readies a new cpuset cgroup for tasks whose memory must follow
	// cpuset.mems: v1 needs cpus, mems and memory_migrate set by hand, v2
	// inherits cpus and always migrates.
	prepare func(t *testing.T, dir string, l layout)
}

var cgroupModes = map[string]cgroupMode{
	"v2": {"/sys/fs/cgroup", unix.CGROUP2_SUPER_MAGIC, "cpuset.mems.effective", func(*testing.T, string, layout) {}},
	"v1": {"/sys/fs/cgroup/cpuset", unix.CGROUP_SUPER_MAGIC, "cpuset.effective_mems", func(t *testing.T, dir string, l layout) {
		all := l.nodeCPUs[0].Union(l.nodeCPUs[1:]...)
		writeKnob(t, dir, "cpuset.cpus", all.String())
		writeKnob(t, dir, "cpuset.mems", "0")
		writeKnob(t, dir, "cpuset.memory_migrate", "1")
	}},
}

// TestCgroupControllers checks the cgroup layout the guest was booted with:
// the hierarchy is mounted and offers cpuset and memory.
func TestCgroupControllers(t *testing.T) {
	l := guest(t)
	mode, ok := cgroupModes[l.cgroup]
	if !ok {
		t.Fatalf("LOCUS_NUMAVM_CGROUP=%q: want v1 or v2", l.cgroup)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(mode.cpusetRoot, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type != mode.magic {
		t.Fatalf("%s has filesystem type %#x, want %#x", mode.cpusetRoot, fs.Type, mode.magic)
	}
	if l.cgroup == "v1" {
		for _, ctrl := range []string{"cpuset", "memory"} {
			if err := unix.Statfs(filepath.Join("/sys/fs/cgroup", ctrl), &fs); err != nil || fs.Type != unix.CGROUP_SUPER_MAGIC {
				t.Errorf("/sys/fs/cgroup/%s is no v1 cgroup mount (%v)", ctrl, err)
			}
		}
		return
	}
	for _, file := range []string{"cgroup.controllers", "cgroup.subtree_control"} {
		have := strings.Fields(readTrim(t, filepath.Join(mode.cpusetRoot, file)))
		for _, ctrl := range []string{"cpuset", "memory"} {
			if !slices.Contains(have, ctrl) {
				t.Errorf("%s/%s = %v, lacks %s", mode.cpusetRoot, file, have, ctrl)
			}
		}
	}
}

// TestCpusetMemsMigrates puts a holder process in a cpuset confined to node 1,
// checks its memory lands there, then narrows cpuset.mems to node 0 and checks
// the kernel migrates the memory: what a node-aware resource manager relies on.
func TestCpusetMemsMigrates(t *testing.T) {
	l := guest(t)
	mode, ok := cgroupModes[l.cgroup]
	if !ok {
		t.Fatalf("LOCUS_NUMAVM_CGROUP=%q: want v1 or v2", l.cgroup)
	}
	dir := filepath.Join(mode.cpusetRoot, fmt.Sprintf("numavm-smoke-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Registered before the holder, so it runs after the holder has exited.
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	mode.prepare(t, dir, l)
	writeKnob(t, dir, "cpuset.mems", "1")
	if got := readTrim(t, filepath.Join(dir, mode.effective)); got != "1" {
		t.Fatalf("%s/%s = %q after writing 1 to cpuset.mems", dir, mode.effective, got)
	}

	h := startHolder(t)
	writeKnob(t, dir, "cgroup.procs", fmt.Sprint(h.pid))
	h.alloc(t)
	waitOnNode(t, h.pid, h.addrs, 1)

	writeKnob(t, dir, "cpuset.mems", "0")
	waitOnNode(t, h.pid, h.addrs, 0)
}

func writeKnob(t *testing.T, dir, name, value string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatalf("write %q to %s: %v", value, path, err)
	}
}

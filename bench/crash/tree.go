package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// controllers are the v1 hierarchies the agent manages; the campaign's
// sub-tree exists in each.
var controllers = []string{"cpuset", "memory", "cpu", "cpuacct"}

// configFiles are the files of a cgroup that hold settings (not counters),
// compared before and after: the ones Locus writes and the ones it must
// never write.
var configFiles = map[string][]string{
	"cpuset": {"cpuset.cpus", "cpuset.mems", "cpuset.cpu_exclusive", "cpuset.mem_exclusive", "cpuset.mem_hardwall",
		"cpuset.memory_migrate", "cpuset.sched_load_balance", "cpuset.sched_relax_domain_level",
		"cpuset.memory_spread_page", "cpuset.memory_spread_slab", "notify_on_release", "cgroup.clone_children"},
	"memory": {"memory.limit_in_bytes", "memory.soft_limit_in_bytes", "memory.memsw.limit_in_bytes",
		"memory.kmem.tcp.limit_in_bytes", "memory.swappiness", "memory.use_hierarchy",
		"memory.move_charge_at_immigrate", "notify_on_release"},
	"cpu":     {"cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.rt_runtime_us", "cpu.rt_period_us", "notify_on_release"},
	"cpuacct": {"notify_on_release"},
}

// tree is the campaign's own cgroup sub-tree:
//
//	ROOT/ext/<name>   an external workload's cgroup, made here, holding a
//	                  sleep started here
//	ROOT/locus/...    cgroupParent: the agent makes and removes these
type tree struct {
	mount    string // /sys/fs/cgroup
	root     string // ROOT, relative to each controller's mount
	cpus     string // every CPU the sub-tree may use
	sleepers map[string]*exec.Cmd
}

func (t *tree) dir(ctrl, rel string) string { return filepath.Join(t.mount, ctrl, rel) }

func (t *tree) write(ctrl, rel, file, value string) error {
	if err := os.WriteFile(filepath.Join(t.dir(ctrl, rel), file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("set %s/%s/%s = %s: %w", ctrl, rel, file, value, err)
	}
	return nil
}

func (t *tree) read(ctrl, rel, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(t.dir(ctrl, rel), file))
	return strings.TrimSpace(string(b)), err
}

// makeTree creates ROOT, ROOT/ext and one cgroup per external workload,
// gives those settings that are not the kernel's defaults (so a restore to
// a default or to the parent's value shows), and starts a sleep in each. It
// refuses a ROOT that already exists: the campaign only works in a tree of
// its own.
func makeTree(mount, root string, external []workload) (*tree, error) {
	t := &tree{mount: mount, root: root, sleepers: map[string]*exec.Cmd{}}
	for _, c := range controllers {
		if _, err := os.Stat(t.dir(c, root)); err == nil {
			return nil, fmt.Errorf("%s already exists; the campaign works only in a cgroup sub-tree it creates", t.dir(c, root))
		}
	}
	cpus, err := os.ReadFile(filepath.Join(mount, "cpuset", "cpuset.cpus"))
	if err != nil {
		return nil, err
	}
	mems, err := os.ReadFile(filepath.Join(mount, "cpuset", "cpuset.mems"))
	if err != nil {
		return nil, err
	}
	t.cpus = strings.TrimSpace(string(cpus))
	dirs := []string{root, root + "/ext"}
	for _, w := range external {
		dirs = append(dirs, root+"/ext/"+w.Name)
	}
	for _, rel := range dirs {
		for _, c := range controllers {
			if err := os.Mkdir(t.dir(c, rel), 0o755); err != nil {
				return t, err
			}
		}
		// A v1 cpuset takes no task before its cpus and mems are set.
		if err := t.write("cpuset", rel, "cpuset.cpus", t.cpus); err != nil {
			return t, err
		}
		if err := t.write("cpuset", rel, "cpuset.mems", strings.TrimSpace(string(mems))); err != nil {
			return t, err
		}
	}
	last := t.cpus[strings.LastIndexAny(t.cpus, ",-")+1:]
	for i, w := range external {
		rel := root + "/ext/" + w.Name
		if i == 0 {
			for _, s := range [][3]string{
				{"cpuset", "cpuset.cpus", last},
				{"memory", "memory.limit_in_bytes", strconv.FormatInt(256*mib, 10)},
				{"memory", "memory.soft_limit_in_bytes", strconv.FormatInt(128*mib, 10)},
				{"cpu", "cpu.shares", "512"},
			} {
				if err := t.write(s[0], rel, s[1], s[2]); err != nil {
					return t, err
				}
			}
		}
		sl := exec.Command("sleep", "100000")
		sl.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := sl.Start(); err != nil {
			return t, err
		}
		t.sleepers[w.Name] = sl
		for _, c := range controllers {
			if err := t.write(c, rel, "cgroup.procs", strconv.Itoa(sl.Process.Pid)); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

// snapshot is every cgroup directory of the sub-tree and the value of
// every setting file in it.
type snapshot struct {
	dirs  map[string]bool   // ctrl/rel
	files map[string]string // ctrl/rel/file
}

func (t *tree) snapshot() (snapshot, error) {
	s := snapshot{dirs: map[string]bool{}, files: map[string]string{}}
	for _, c := range controllers {
		base := filepath.Join(t.mount, c)
		err := filepath.WalkDir(t.dir(c, t.root), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, os.ErrNotExist) { // removed while walking
					return nil
				}
				return err
			}
			if !d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(base, p)
			s.dirs[c+"/"+rel] = true
			for _, f := range configFiles[c] {
				if b, err := os.ReadFile(filepath.Join(p, f)); err == nil {
					s.files[c+"/"+rel+"/"+f] = strings.TrimSpace(string(b))
				}
			}
			return nil
		})
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// diff lists how now differs from s, sorted.
func (s snapshot) diff(now snapshot) []string {
	var out []string
	for d := range s.dirs {
		if !now.dirs[d] {
			out = append(out, "cgroup "+d+" is gone")
		}
	}
	for d := range now.dirs {
		if !s.dirs[d] {
			out = append(out, "cgroup "+d+" is left over")
		}
	}
	for f, v := range s.files {
		if w, ok := now.files[f]; ok && w != v {
			out = append(out, fmt.Sprintf("%s = %s, originally %s", f, w, v))
		}
	}
	sort.Strings(out)
	return out
}

// procs lists the pids in a cgroup of one controller.
func (t *tree) procs(ctrl, rel string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(t.dir(ctrl, rel), "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// stateDirProcs finds the processes whose environment names stateDir in
// LOCUS_STATE_DIR: those the agent started for this campaign (a directory
// of its own), wherever they are.
func stateDirProcs(stateDir string) []int {
	want := []byte("LOCUS_STATE_DIR=" + stateDir + "\x00")
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// remove kills the processes in the sub-tree (the campaign's sleeps and the
// workloads the agent started for it) and any other process the agent
// started for stateDir, then removes the sub-tree, deepest first.
func (t *tree) remove(stateDir string) error {
	for _, sl := range t.sleepers {
		_ = sl.Process.Kill()
		_ = sl.Wait()
	}
	if stateDir != "" {
		for _, pid := range stateDirProcs(stateDir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	var errs []error
	for _, c := range controllers {
		var dirs []string
		_ = filepath.WalkDir(t.dir(c, t.root), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if b, err := os.ReadFile(filepath.Join(d, "cgroup.procs")); err == nil {
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
			// Killed tasks leave the cgroup a little after the signal.
			var err error
			for i := 0; i < 300; i++ {
				if err = syscall.Rmdir(d); err == nil || err == syscall.ENOENT {
					err = nil
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fixture is a fake cgroup tree on an ordinary filesystem. Creating a cgroup
// fills it with the files the kernel would; anolis adds the Alibaba Cloud
// Linux / Anolis extension files.
type fixture struct {
	t      *testing.T
	root   string
	v      Version
	anolis bool
}

var v1Files = map[Controller]map[string]string{
	CPUSet: {"cpuset.cpus": "", "cpuset.mems": "", "cgroup.procs": "", "tasks": ""},
	Memory: {"memory.limit_in_bytes": "9223372036854771712", "memory.soft_limit_in_bytes": "9223372036854771712",
		"memory.usage_in_bytes": "4096", "cgroup.procs": "", "tasks": ""},
	CPU:     {"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000", "cpu.shares": "1024", "cgroup.procs": "", "tasks": ""},
	CPUAcct: {"cpuacct.usage": "1500", "cgroup.procs": "", "tasks": ""},
}

var v1Anolis = map[string]string{"memory.min": "0", "memory.low": "0", "memory.high": "max",
	"memory.wmark_ratio": "0", "memory.wmark_high": "9223372036854771712", "memory.wmark_min_adj": "0",
	"memory.wmark_scale_factor": "50"}

var v2Files = map[string]string{"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "",
	"cgroup.procs": "", "cgroup.threads": "", "cpuset.cpus": "", "cpuset.mems": "", "cpu.max": "max 100000",
	"cpu.weight": "100", "cpu.stat": "usage_usec 2500\nuser_usec 2000\nsystem_usec 500",
	"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.max": "max", "memory.current": "8192"}

var v2Anolis = map[string]string{"memory.wmark_ratio": "0", "memory.wmark_high": "max",
	"memory.wmark_min_adj": "0", "memory.wmark_scale_factor": "50"}

func newFixture(t *testing.T, v Version, anolis bool) *fixture {
	t.Helper()
	f := &fixture{t: t, root: t.TempDir(), v: v, anolis: anolis}
	if v == V1 {
		for c := range v1Files {
			f.populate(filepath.Join(f.root, string(c)), c)
		}
		f.set(CPUSet, "", "cpuset.cpus", "0-7")
		f.set(CPUSet, "", "cpuset.mems", "0-1")
	} else {
		f.populate(f.root, "")
		for _, name := range []string{"cpuset.cpus", "cpuset.mems", "memory.min", "memory.low", "memory.high", "memory.max", "cpu.max", "cpu.weight"} {
			os.Remove(filepath.Join(f.root, name)) // v2 root cgroups lack these
		}
		f.set("", "", "cgroup.subtree_control", "cpuset cpu memory")
	}
	return f
}

// populate creates dir with the files of controller c (all files on v2).
func (f *fixture) populate(dir string, c Controller) {
	f.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	files, ext := v2Files, v2Anolis
	if f.v == V1 {
		files, ext = v1Files[c], map[string]string{}
		if c == Memory {
			ext = v1Anolis
		}
	}
	write := func(m map[string]string) {
		for name, val := range m {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(val+"\n"), 0o644); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	write(files)
	if f.anolis {
		write(ext)
	}
}

// mkcg creates cgroup rel (and missing ancestors) in every hierarchy, with
// v1 cpusets copied from the parent as a kernel with clone_children would.
func (f *fixture) mkcg(rels ...string) {
	f.t.Helper()
	for _, rel := range rels {
		for _, p := range prefixes(rel) {
			for _, c := range f.controllers() {
				dir := f.dir(c, p)
				if _, err := os.Stat(dir); err == nil {
					continue
				}
				f.populate(dir, c)
				if c == CPUSet {
					parent, _ := parentRel(p)
					f.set(c, p, "cpuset.cpus", f.get(c, parent, "cpuset.cpus"))
					f.set(c, p, "cpuset.mems", f.get(c, parent, "cpuset.mems"))
				}
			}
		}
	}
}

func (f *fixture) controllers() []Controller {
	if f.v == V2 {
		return []Controller{""}
	}
	return managedV1
}

func (f *fixture) dir(c Controller, rel string) string {
	if f.v == V2 {
		c = ""
	}
	return filepath.Join(f.root, string(c), rel)
}

func (f *fixture) set(c Controller, rel, name, val string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir(c, rel), name), []byte(val+"\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) get(c Controller, rel, name string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir(c, rel), name))
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// recorder wraps a Writer's file writes and logs them.
type recorder struct {
	mu     sync.Mutex
	writes []FileWrite
	fail   func(path, value string) error // injected failures, may be nil
}

func (r *recorder) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.writes) }

// writer opens the fixture and returns a Writer whose writes are recorded and
// whose mkdir/rmdir behave like the kernel's (new cgroups come with files).
func (f *fixture) writer(store OriginalStore) (*Writer, *recorder) {
	f.t.Helper()
	h, err := Open(f.root, f.v)
	if err != nil {
		f.t.Fatal(err)
	}
	w, err := NewWriter(h, store)
	if err != nil {
		f.t.Fatal(err)
	}
	rec := &recorder{}
	w.write = func(path, value string) error {
		if rec.fail != nil {
			if err := rec.fail(path, value); err != nil {
				return &WriteError{Path: path, Value: value, Err: err}
			}
		}
		if err := h.writeFile(path, kernelText(path, value)); err != nil {
			return err
		}
		rec.mu.Lock()
		rec.writes = append(rec.writes, FileWrite{path, value})
		rec.mu.Unlock()
		return nil
	}
	w.mkdirFn = func(dir string) error {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		c := Controller("")
		if f.v == V1 {
			rel, _ := filepath.Rel(f.root, dir)
			c = Controller(strings.SplitN(rel, "/", 2)[0])
		}
		f.populate(dir, c)
		return nil
	}
	w.rmdirFn = func(dir string) error {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.IsDir() {
				return &os.PathError{Op: "rmdir", Path: dir, Err: os.ErrExist}
			}
		}
		return os.RemoveAll(dir)
	}
	return w, rec
}

func removeFile(dir, name string) error { return os.Remove(filepath.Join(dir, name)) }

// kernelText mimics files whose content is not what was written: v2
// cgroup.subtree_control takes "+ctrl -ctrl" edits and lists the result.
func kernelText(path, value string) string {
	if filepath.Base(path) != "cgroup.subtree_control" {
		return value
	}
	b, _ := os.ReadFile(path)
	on := map[string]bool{}
	for _, c := range strings.Fields(string(b)) {
		on[c] = true
	}
	for _, e := range strings.Fields(value) {
		on[e[1:]] = e[0] == '+'
	}
	var out []string
	for _, c := range []string{"cpuset", "cpu", "io", "memory", "pids"} {
		if on[c] {
			out = append(out, c)
		}
	}
	return strings.Join(out, " ")
}

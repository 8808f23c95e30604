package execute

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// recreateTree is a cgroup tree of plain files with cgroup pods/redis: on
// v1 in the cpuset and memory hierarchies, on v2 in the one.
type recreateTree struct {
	t    *testing.T
	root string
	v    cgroup.Version
}

// dir is where cgroup pods/redis keeps controller c's files.
func (tr recreateTree) dir(c cgroup.Controller) string {
	if tr.v == cgroup.V1 {
		return filepath.Join(tr.root, string(c), "pods/redis")
	}
	return filepath.Join(tr.root, "pods/redis")
}

// fill writes a fresh cgroup's files into dir (which must exist).
func (tr recreateTree) fill(dir string) {
	tr.t.Helper()
	for name, text := range map[string]string{"cgroup.procs": "", "cpuset.cpus": "0-7", "memory.high": "max",
		"memory.max": "max", "memory.limit_in_bytes": "9223372036854771712"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			tr.t.Fatal(err)
		}
	}
}

// recreate removes controller c's directory of pods/redis and creates it
// again with fresh files. The new directory is made before the old one
// goes, so that it cannot get the old one's inode number: a filesystem is
// free to hand a freed one out again, and a test must not pass or fail by
// that chance.
func (tr recreateTree) recreate(c cgroup.Controller) {
	tr.t.Helper()
	dir := tr.dir(c)
	if err := os.Mkdir(dir+".new", 0o755); err != nil {
		tr.t.Fatal(err)
	}
	tr.fill(dir + ".new")
	if err := os.Rename(dir, dir+".gone"); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.Rename(dir+".new", dir); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr recreateTree) read(c cgroup.Controller, name string) string {
	tr.t.Helper()
	b, err := os.ReadFile(filepath.Join(tr.dir(c), name))
	if err != nil {
		tr.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (tr recreateTree) write(c cgroup.Controller, name, text string) {
	tr.t.Helper()
	if err := os.WriteFile(filepath.Join(tr.dir(c), name), []byte(text), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// newRecheckingExecutor is an Executor on a fresh tree of version v that
// trusts confirmed files for 10 s of the clock it returns, as the agent
// runs it in standalone mode (not Pods).
func newRecheckingExecutor(t *testing.T, v cgroup.Version) (*Executor, recreateTree, *time.Time) {
	t.Helper()
	tr := recreateTree{t: t, root: t.TempDir(), v: v}
	ctrls := map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory"}
	var dirs []string
	if v == cgroup.V1 {
		dirs = []string{"cpuset", "cpuset/pods", "memory", "memory/pods"}
		ctrls = map[string]string{"cpuset.cpus": "0-7", "cpuset.mems": "0"}
	} else {
		dirs = []string{"", "pods"}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(tr.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range ctrls {
			if err := os.WriteFile(filepath.Join(tr.root, d, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []cgroup.Controller{cgroup.CPUSet, cgroup.Memory} {
		if err := os.MkdirAll(tr.dir(c), 0o755); err != nil {
			t.Fatal(err)
		}
		tr.fill(tr.dir(c))
	}
	h, err := cgroup.Open(tr.root, v)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	c := testConfig(t, h, cgroup.NewMemoryStore(), &events{})
	c.Recheck, c.Now = 10*time.Second, func() time.Time { return now }
	e := mustNew(t, c)
	return e, tr, &now
}

// A cgroup removed and created again at the same path between two
// reconciles is a new cgroup: its files are written in the next one, not
// trusted to hold what the old one's were confirmed to. On v1 one logical
// cgroup is a directory per controller, each told apart on its own: a new
// memory directory is written again, the cpuset one that stayed is still
// trusted. The files the status reads are read from the new directory too,
// and the processes in the cgroup every time.
func TestRecheckWritesARecreatedCgroupAtOnce(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			e, tr, now := newRecheckingExecutor(t, v)
			owner := map[string]string{"pods/redis": "redis"}
			ops := []cgroup.Op{{Cgroup: "pods/redis", Knob: cgroup.CPUSetCPUs, Value: "4-5"},
				{Cgroup: "pods/redis", Knob: cgroup.MemoryLimit, Value: "134217728"}}
			reconcile := func() Report { // as the agent does, in a scope of the hierarchy
				t.Helper()
				defer e.c.Hierarchy.Scope()()
				*now = now.Add(time.Second)
				rep := e.write(ops, nil, owner)
				if len(rep.Errors) > 0 {
					t.Fatal(rep.Errors)
				}
				return rep
			}
			memFile := map[cgroup.Version]string{cgroup.V1: "memory.limit_in_bytes", cgroup.V2: "memory.max"}[v]
			status := func() (string, []int) {
				t.Helper()
				defer e.c.Hierarchy.Scope()()
				r := e.Reader(nil)
				high, err := r.ReadKnob("pods/redis", cgroup.MemoryHigh)
				if err != nil {
					t.Fatal(err)
				}
				pids, err := r.Procs("pods/redis")
				if err != nil {
					t.Fatal(err)
				}
				return high, pids
			}

			if rep := reconcile(); rep.Writes != 2 {
				t.Fatalf("first reconcile wrote %d files, want 2", rep.Writes)
			}
			reconcile() // reads the memory limit back (the kernel may round it) and confirms it
			if high, _ := status(); high != "max" {
				t.Fatalf("memory.high read as %q", high)
			}
			// Both are trusted now: drift in the same directories stays until
			// the recheck, and so does what the status read.
			tr.write(cgroup.CPUSet, "cpuset.cpus", "0-7")
			tr.write(cgroup.Memory, memFile, "1048576")
			tr.write(cgroup.Memory, "memory.high", "2097152")
			tr.write(cgroup.CPUSet, "cgroup.procs", "42\n")
			if rep := reconcile(); rep.Writes != 0 {
				t.Fatalf("reconcile of trusted files wrote %d", rep.Writes)
			}
			if got := tr.read(cgroup.CPUSet, "cpuset.cpus"); got != "0-7" {
				t.Fatalf("trusted cpuset.cpus was read and repaired to %q: no trust to test", got)
			}
			if high, pids := status(); high != "max" || !reflect.DeepEqual(pids, []int{42}) {
				t.Fatalf("status read memory.high %q (want the remembered max), pids %v (want those there now, [42])", high, pids)
			}

			tr.recreate(cgroup.Memory)
			tr.write(cgroup.Memory, "memory.high", "3145728")
			tr.write(cgroup.Memory, "cgroup.procs", "7\n") // v2: the one directory
			rep := reconcile()
			if got := tr.read(cgroup.Memory, memFile); got != "134217728" {
				t.Errorf("recreated cgroup's %s = %q, want it written at once (134217728)", memFile, got)
			}
			wantWrites, wantCPUs := 1, "0-7" // v1: the cpuset directory is the old one, still trusted
			if v == cgroup.V2 {
				wantWrites, wantCPUs = 2, "4-5"
			}
			if rep.Writes != wantWrites {
				t.Errorf("reconcile after the recreation wrote %d files, want %d", rep.Writes, wantWrites)
			}
			if got := tr.read(cgroup.CPUSet, "cpuset.cpus"); got != wantCPUs {
				t.Errorf("cpuset.cpus = %q, want %q", got, wantCPUs)
			}
			high, pids := status()
			if high != "3145728" {
				t.Errorf("status read memory.high %q from the recreated cgroup, want its own 3145728", high)
			}
			// A HostConfig's processes are read every time.
			if want := map[cgroup.Version][]int{cgroup.V1: {42}, cgroup.V2: {7}}[v]; !reflect.DeepEqual(pids, want) {
				t.Errorf("status read pids %v, want the ones there now, %v", pids, want)
			}
		})
	}
}

package execute

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// poolTree is a cgroup v2 tree of plain files with pods a to e under
// pods/, each with container cgroup app (e: x and y), every cpuset.cpus
// 0-7 and cpuset.mems 0, and an executor of pods on it.
func poolTree(t *testing.T) (*Executor, *events, string) {
	t.Helper()
	root := t.TempDir()
	ctl := map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory"}
	leaf := map[string]string{"cgroup.procs": "", "cpuset.cpus": "0-7", "cpuset.mems": "0", "memory.high": "max"}
	dirs := map[string]map[string]string{"": ctl, "pods": ctl}
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		dirs["pods/"+p] = ctl
	}
	for _, c := range []string{"a/app", "b/app", "c/app", "d/app", "e/x", "e/y"} {
		dirs["pods/"+c] = leaf
	}
	writeTree(t, root, dirs)
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	c := testConfig(t, h, cgroup.NewMemoryStore(), ev)
	c.Pods = true
	return mustNew(t, c), ev, root
}

// poolOps are the ops of containers on a pool: its mems and cpus.
func poolOps(pool, mems, cpus string, cgs ...string) []cgroup.Op {
	var ops []cgroup.Op
	for _, cg := range cgs {
		ops = append(ops, cgroup.Op{Cgroup: cg, Knob: cgroup.CPUSetMems, Value: mems, Pool: pool},
			cgroup.Op{Cgroup: cg, Knob: cgroup.CPUSetCPUs, Value: cpus, Pool: pool})
	}
	return ops
}

var poolOwners = map[string]string{"pods/a": "a", "pods/a/app": "a", "pods/b": "b", "pods/b/app": "b",
	"pods/c": "c", "pods/c/app": "c", "pods/d": "d", "pods/d/app": "d", "pods/e": "e", "pods/e/x": "e", "pods/e/y": "e"}

// A shared pool's move is told once on the node, with how many containers
// of how many workloads followed it; a workload joining the pool, leaving
// its own CPUs for it, with anything else written, or whose file someone
// else changed keeps its CgroupUpdated with every file written.
//
// With rechecks on, a file trusted is not read before its new value is
// written (cgroup.Op.Known), so a change someone else made to it is not
// seen then: its write counts with the pool's, and repairs it all the same.
func TestPoolMoveIsOneNodeEvent(t *testing.T) {
	for _, recheck := range []bool{false, true} {
		t.Run(fmt.Sprintf("recheck=%v", recheck), func(t *testing.T) { testPoolMove(t, recheck) })
	}
}

func testPoolMove(t *testing.T, recheck bool) {
	e, ev, root := poolTree(t)
	if recheck {
		now := time.Unix(1000, 0)
		e.c.Recheck, e.c.Now = time.Minute, func() time.Time { now = now.Add(time.Second); return now }
	}
	step := func(name string, ops []cgroup.Op, want ...string) {
		t.Helper()
		*ev = nil
		rep := e.write(ops, nil, poolOwners)
		if len(rep.Errors) > 0 {
			t.Fatalf("%s: %v", name, rep.Errors)
		}
		got := slices.Clone(*ev)
		slices.Sort(got)
		slices.Sort(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: events\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// a, b and e join the shared pool, c is pinned: each its own news (e's
	// containers, written apart, told apart as before).
	step("joining", append(poolOps("shared", "0", "2-7", "pods/a/app", "pods/b/app", "pods/e/x", "pods/e/y"),
		cgroup.Op{Cgroup: "pods/c/app", Knob: cgroup.CPUSetCPUs, Value: "0-1"}),
		"CgroupUpdated a: cpuset.cpus=2-7", "CgroupUpdated b: cpuset.cpus=2-7",
		"CgroupUpdated c: cpuset.cpus=0-1", "CgroupUpdated e: cpuset.cpus=2-7", "CgroupUpdated e: cpuset.cpus=2-7")
	// The pool shrinks as d is pinned: a and e (two containers, written
	// apart) only follow it; b's memory.high is written too, so b keeps
	// its event with both files.
	step("pool shrinks", append(append(poolOps("shared", "0", "4-7", "pods/a/app", "pods/b/app", "pods/e/x", "pods/e/y"),
		cgroup.Op{Cgroup: "pods/b/app", Knob: cgroup.MemoryHigh, Value: "1073741824"},
		cgroup.Op{Cgroup: "pods/c/app", Knob: cgroup.CPUSetCPUs, Value: "0-1"}),
		cgroup.Op{Cgroup: "pods/d/app", Knob: cgroup.CPUSetCPUs, Value: "2-3"}),
		"CgroupUpdated b: cpuset.cpus=4-7 memory.high=1073741824", "CgroupUpdated d: cpuset.cpus=2-3",
		"SharedPoolChanged : shared pool now CPUs 4-7, mems 0: cpuset.cpus rewritten in 3 containers of 2 workloads")
	// c is freed into the pool (from CPUs of its own: its news), the pool
	// grows; someone else wrote a's file meanwhile, so a's write is a
	// repair, told on a.
	if err := os.WriteFile(filepath.Join(root, "pods/a/app/cpuset.cpus"), []byte("5"), 0o644); err != nil {
		t.Fatal(err)
	}
	grows := []string{"CgroupUpdated a: cpuset.cpus=0-1,4-7", "CgroupUpdated c: cpuset.cpus=0-1,4-7",
		"SharedPoolChanged : shared pool now CPUs 0-1,4-7, mems 0: cpuset.cpus rewritten in 3 containers of 2 workloads"}
	if recheck {
		grows = []string{"CgroupUpdated c: cpuset.cpus=0-1,4-7",
			"SharedPoolChanged : shared pool now CPUs 0-1,4-7, mems 0: cpuset.cpus rewritten in 4 containers of 3 workloads"}
	}
	step("pool grows", append(poolOps("shared", "0", "0-1,4-7", "pods/a/app", "pods/b/app", "pods/c/app", "pods/e/x", "pods/e/y"),
		cgroup.Op{Cgroup: "pods/b/app", Knob: cgroup.MemoryHigh, Value: "1073741824"},
		cgroup.Op{Cgroup: "pods/d/app", Knob: cgroup.CPUSetCPUs, Value: "2-3"}), grows...)
	if got, _ := os.ReadFile(filepath.Join(root, "pods/a/app/cpuset.cpus")); string(got) != "0-1,4-7" {
		t.Errorf("a's cpuset.cpus %q after the pool grew, want 0-1,4-7", got)
	}
	// The pool spans another node: mems and cpus follow it.
	step("pool moves across nodes", poolOps("shared", "0-1", "0-1,4-7,8", "pods/a/app", "pods/b/app", "pods/c/app", "pods/e/x", "pods/e/y"),
		"SharedPoolChanged : shared pool now CPUs 0-1,4-7,8, mems 0-1: cpuset.cpus, cpuset.mems rewritten in 5 containers of 4 workloads")
	// Files left holding their value, and a pool that stays, tell nothing.
	step("nothing moves", poolOps("shared", "0-1", "0-1,4-7,8", "pods/a/app", "pods/b/app", "pods/c/app", "pods/e/x", "pods/e/y"))
}

// Where the decision writes no pool's mems (the kubelet's memory manager
// binds every pod's memory), the event names the CPUs alone.
func TestPoolMoveWithoutMems(t *testing.T) {
	e, ev, _ := poolTree(t)
	cpus := func(v string) []cgroup.Op {
		var ops []cgroup.Op
		for _, cg := range []string{"pods/a/app", "pods/b/app"} {
			ops = append(ops, cgroup.Op{Cgroup: cg, Knob: cgroup.CPUSetCPUs, Value: v, Pool: "shared"})
		}
		return ops
	}
	e.write(cpus("2-7"), nil, poolOwners)
	*ev = nil
	e.write(cpus("3-7"), nil, poolOwners)
	want := "SharedPoolChanged : shared pool now CPUs 3-7: cpuset.cpus rewritten in 2 containers of 2 workloads"
	if strings.Join(*ev, "\n") != want {
		t.Errorf("events %q, want %q", *ev, want)
	}
}

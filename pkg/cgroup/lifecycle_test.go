package cgroup

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestEnsureAndRemoveV1(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("theirs")
	store := NewMemoryStore()
	w, rec := f.writer(store)
	created, err := w.EnsureCgroup("locus.slice/vm1")
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 8 { // two levels in cpuset, memory, cpu, cpuacct
		t.Fatalf("created %v", created)
	}
	for _, rel := range []string{"locus.slice", "locus.slice/vm1"} {
		if f.get(CPUSet, rel, "cpuset.cpus") != "0-7" || f.get(CPUSet, rel, "cpuset.mems") != "0-1" {
			t.Errorf("%s: new v1 cpuset not initialised from its parent", rel)
		}
	}
	if again, err := w.EnsureCgroup("locus.slice/vm1"); err != nil || len(again) != 0 {
		t.Fatalf("second EnsureCgroup: %v, %v", again, err)
	}
	// A crash between mkdir and initialisation leaves an empty cpuset;
	// EnsureCgroup repairs cgroups it owns.
	f.set(CPUSet, "locus.slice/vm1", "cpuset.mems", "")
	if _, err := w.EnsureCgroup("locus.slice/vm1"); err != nil || f.get(CPUSet, "locus.slice/vm1", "cpuset.mems") != "0-1" {
		t.Fatalf("repair: %v, mems %q", err, f.get(CPUSet, "locus.slice/vm1", "cpuset.mems"))
	}
	// Nothing of a cgroup Locus did not create is changed.
	n := rec.count()
	if _, err := w.EnsureCgroup("theirs"); err != nil || rec.count() != n {
		t.Fatalf("EnsureCgroup on a foreign cgroup: %v, writes %v", err, rec.writes[n:])
	}
	if err := w.RemoveCgroup("theirs"); !errors.Is(err, ErrNotCreated) {
		t.Fatalf("RemoveCgroup(theirs) = %v, want ErrNotCreated", err)
	}
	if _, err := w.Apply([]Op{{Cgroup: "locus.slice/vm1", Knob: MemoryLimit, Value: "1048576"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.RemoveCgroup("locus.slice"); err == nil {
		t.Fatal("removed a parent before its child")
	}
	if err := w.RemoveCgroup("locus.slice/vm1"); err != nil {
		t.Fatal(err)
	}
	if err := w.RemoveCgroup("locus.slice"); err != nil {
		t.Fatal(err)
	}
	for _, c := range managedV1 {
		if _, err := os.Stat(f.dir(c, "locus.slice")); !os.IsNotExist(err) {
			t.Errorf("%s/locus.slice still exists", c)
		}
	}
	if _, err := os.Stat(f.dir(CPU, "theirs")); err != nil {
		t.Error("a foreign cgroup disappeared")
	}
	if len(store.Keys()) != 0 {
		t.Errorf("marks or originals left behind: %v", store.Keys())
	}
}

func TestEnsureV2Delegates(t *testing.T) {
	f := newFixture(t, V2, false)
	w, rec := f.writer(NewMemoryStore())
	if _, err := w.EnsureCgroup("locus.slice/vm1"); err != nil {
		t.Fatal(err)
	}
	if got := writePaths(rec.writes, f.root); got != "locus.slice/cgroup.subtree_control=+cpuset +cpu +memory" {
		t.Fatalf("writes %q: only the intermediate Locus owns delegates", got)
	}
	if _, err := w.EnsureCgroup("locus.slice/vm1"); err != nil || rec.count() != 1 {
		t.Fatalf("second EnsureCgroup wrote again: %v %v", err, rec.writes)
	}
}

func TestAddProcs(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("a")
	w, rec := f.writer(NewMemoryStore())
	rec.fail = func(path, value string) error {
		if value == "999" {
			return unix.ESRCH
		}
		return nil
	}
	rep, err := w.AddProcs("a", []int{10, 999, 11})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Moved) != 2 || rep.Exited[0] != 999 {
		t.Fatalf("report %+v", rep)
	}
	// One pid per write, in every hierarchy; the exited pid is not retried.
	if rec.count() != 2*len(managedV1) {
		t.Fatalf("writes %v", rec.writes)
	}
	for _, wr := range rec.writes {
		if !strings.HasSuffix(wr.Path, "/a/cgroup.procs") || strings.Contains(wr.Value, "\n") {
			t.Errorf("write %v", wr)
		}
	}
	if _, err := w.AddProcs("missing", []int{1}); err == nil {
		t.Error("AddProcs into a missing cgroup succeeded")
	}
	if _, err := w.AddProcs("a", []int{0}); err == nil {
		t.Error("pid 0 accepted")
	}
}

func TestReaders(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		f := newFixture(t, v, false)
		f.mkcg("a/x", "a/y")
		h, _ := Open(f.root, v)
		kids, err := h.Children(Memory, "a")
		if err != nil || strings.Join(kids, ",") != "a/x,a/y" {
			t.Errorf("%v Children = %v, %v", v, kids, err)
		}
		procsFile, threadsFile := "cgroup.procs", "tasks"
		wantCPU := 1500 * time.Nanosecond
		if v == V2 {
			threadsFile, wantCPU = "cgroup.threads", 2500*time.Microsecond
		}
		f.set(CPUSet, "a", procsFile, "10\n12")
		f.set(CPUSet, "a", threadsFile, "10\n11\n12")
		if p, err := h.Procs("a"); err != nil || len(p) != 2 || p[1] != 12 {
			t.Errorf("%v Procs = %v, %v", v, p, err)
		}
		if p, err := h.Threads("a"); err != nil || len(p) != 3 {
			t.Errorf("%v Threads = %v, %v", v, p, err)
		}
		if d, err := h.CPUUsage("a"); err != nil || d != wantCPU {
			t.Errorf("%v CPUUsage = %v, %v", v, d, err)
		}
		if _, err := h.ReadKnob("a", MemoryWmarkRatio); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v ReadKnob(wmark_ratio) on a plain kernel = %v", v, err)
		}
		if got, err := h.ReadKnob("a", CPUSetCPUs); err != nil || got == "" && v == V1 {
			t.Errorf("%v ReadKnob(cpuset.cpus) = %q, %v", v, got, err)
		}
	}
}

// TestRemoveCgroupWithinWaitsForRelease: a cgroup the kernel still counts
// an exited process in (EBUSY) is removed once it lets go, within the
// bound; without a bound, or past it, the EBUSY is returned; any other
// error is returned at once.
func TestRemoveCgroupWithinWaitsForRelease(t *testing.T) {
	f := newFixture(t, V2, false)
	w, _ := f.writer(NewMemoryStore())
	rmdir := w.rmdirFn
	busy, calls := 0, 0
	w.rmdirFn = func(dir string) error {
		calls++
		if busy > 0 {
			busy--
			return &os.PathError{Op: "rmdir", Path: dir, Err: unix.EBUSY}
		}
		return rmdir(dir)
	}
	ensure := func() {
		t.Helper()
		if _, err := w.EnsureCgroup("locus.slice/w"); err != nil {
			t.Fatal(err)
		}
	}
	ensure()
	busy = 3
	if err := w.RemoveCgroupWithin("locus.slice/w", 0, time.Millisecond); !errors.Is(err, unix.EBUSY) || calls != 1 {
		t.Fatalf("no bound: err %v after %d attempts, want EBUSY after 1", err, calls)
	}
	busy, calls = 3, 0
	if err := w.RemoveCgroupWithin("locus.slice/w", 5*time.Second, time.Millisecond); err != nil || calls != 4 {
		t.Fatalf("within 5s: err %v after %d attempts, want removed at the 4th", err, calls)
	}
	if _, err := os.Stat(f.dir("", "locus.slice/w")); !os.IsNotExist(err) {
		t.Fatalf("locus.slice/w still there: %v", err)
	}
	ensure()
	busy, calls = 1<<30, 0
	start := time.Now()
	if err := w.RemoveCgroupWithin("locus.slice/w", 50*time.Millisecond, 5*time.Millisecond); !errors.Is(err, unix.EBUSY) {
		t.Fatalf("busy past the bound: err %v, want EBUSY", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("gave up after %v, bound 50ms", d)
	}
	busy, calls = 0, 0
	w.rmdirFn = func(dir string) error {
		calls++
		return &os.PathError{Op: "rmdir", Path: dir, Err: unix.EACCES}
	}
	if err := w.RemoveCgroupWithin("locus.slice/w", time.Second, time.Millisecond); !errors.Is(err, unix.EACCES) || calls != 1 {
		t.Fatalf("EACCES: err %v after %d attempts, want it at once", err, calls)
	}
}

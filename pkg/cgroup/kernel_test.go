package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Real-kernel tests. They run on this host's cgroups in sub-trees they create
// (locus-test-<pid>-...) and remove, and move only processes they start.
// They need root; without root they skip and say so.

func hostV1(t *testing.T) *Hierarchy {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("real-kernel cgroup test needs root to create cgroups")
	}
	if !hostIsV1() {
		t.Skip("host has no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset")
	}
	h, err := Open(DefaultRoot, Auto)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version() != V1 {
		t.Fatalf("host detected as %v, want v1", h.Version())
	}
	return h
}

// kernelWriter returns a Writer on h with a file store, logging its writes,
// and registers cleanup that removes rels (children first) in every managed
// hierarchy whatever the test did.
func kernelWriter(t *testing.T, h *Hierarchy, rels ...string) (*Writer, *[]FileWrite) {
	t.Helper()
	store, err := OpenFileStore(filepath.Join(t.TempDir(), "originals.json"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(h, store)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	log := &[]FileWrite{}
	w.write = func(path, value string) error {
		err := h.writeFile(path, value)
		if err == nil {
			mu.Lock()
			*log = append(*log, FileWrite{path, value})
			mu.Unlock()
		}
		return err
	}
	t.Cleanup(func() {
		sorted := slices.Clone(rels)
		sortTopDown(sorted)
		slices.Reverse(sorted)
		for _, c := range h.hierarchies() {
			for _, rel := range sorted {
				dir, _ := h.Dir(c, rel)
				if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
					t.Errorf("cleanup rmdir %s: %v", dir, err)
				}
			}
		}
	})
	return w, log
}

// startSleep starts a child process the test owns and kills it at cleanup
// (registered after kernelWriter's, so it runs first).
func startSleep(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

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
	t.Fatal("no Cpus_allowed_list")
	return ""
}

func sinceWrites(log *[]FileWrite, n int) string {
	var out []string
	for _, w := range (*log)[n:] {
		out = append(out, strings.TrimPrefix(w.Path, DefaultRoot+"/")+"="+w.Value)
	}
	return strings.Join(out, " ")
}

func TestKernelV1CpusetOrdering(t *testing.T) {
	h := hostV1(t)
	parent := fmt.Sprintf("locus-test-%d-cpuset", os.Getpid())
	child := parent + "/child"
	w, log := kernelWriter(t, h, parent, child)
	all, err := h.ReadKnob("", CPUSetCPUs)
	if err != nil {
		t.Fatal(err)
	}
	cpus := mustSet(all).List()
	if len(cpus) < 2 {
		t.Skipf("ordering needs two CPUs; the root cpuset has %s", all)
	}
	a, b := fmt.Sprint(cpus[0]), fmt.Sprint(cpus[1])
	ab := a + "," + b

	if _, err := w.EnsureCgroup(child); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{parent, child} {
		if got, _ := h.ReadKnob(rel, CPUSetMems); got == "" {
			t.Fatalf("%s: cpuset.mems left empty; no task could join", rel)
		}
	}
	apply := func(ops ...Op) string {
		t.Helper()
		n := len(*log)
		if _, err := w.Apply(ops); err != nil {
			t.Fatal(err)
		}
		return sinceWrites(log, n)
	}
	cp := func(rel string) string { return "cpuset/" + rel + "/cpuset.cpus=" }

	if got := apply(Op{Cgroup: child, Knob: CPUSetCPUs, Value: b}); got != cp(child)+b {
		t.Errorf("narrow child: %s", got)
	}
	pid := startSleep(t)
	rep, err := w.AddProcs(child, []int{pid})
	if err != nil || len(rep.Moved) != 1 {
		t.Fatalf("AddProcs: %+v %v", rep, err)
	}
	if procs, _ := h.Procs(child); !slices.Contains(procs, pid) {
		t.Fatalf("pid %d not in %s: %v", pid, child, procs)
	}
	if got := cpusAllowed(t, pid); got != b {
		t.Fatalf("Cpus_allowed_list = %s, want %s", got, b)
	}
	if got := apply(Op{Cgroup: child, Knob: CPUSetCPUs, Value: a}); got != cp(child)+a || cpusAllowed(t, pid) != a {
		t.Fatalf("move child: writes %s, allowed %s", got, cpusAllowed(t, pid))
	}
	// Narrowing the parent: the child (already on a) goes first, parent after.
	if got := apply(Op{Cgroup: parent, Knob: CPUSetCPUs, Value: a}, Op{Cgroup: child, Knob: CPUSetCPUs, Value: a}); got != cp(parent)+a {
		t.Errorf("narrow parent: %s", got)
	}
	// The kernel refuses the wrong order; this is what the planner avoids.
	parentFile, _ := h.file(CPUSet, parent, "cpuset.cpus")
	if err := h.writeFile(parentFile, b); !errors.Is(err, unix.EBUSY) {
		t.Fatalf("narrowing a parent away from its child: %v, want EBUSY", err)
	}
	childFile, _ := h.file(CPUSet, child, "cpuset.cpus")
	if err := h.writeFile(childFile, ab); !errors.Is(err, unix.EACCES) {
		t.Fatalf("child outside its parent: %v, want EACCES", err)
	}
	// Both move to b: widen the parent to a,b, move the child, narrow the parent.
	if got := apply(Op{Cgroup: child, Knob: CPUSetCPUs, Value: b}, Op{Cgroup: parent, Knob: CPUSetCPUs, Value: b}); got != cp(parent)+mustSet(ab).String()+" "+cp(child)+b+" "+cp(parent)+b {
		t.Errorf("move both: %s", got)
	}
	if cpusAllowed(t, pid) != b {
		t.Errorf("after moving both, allowed %s", cpusAllowed(t, pid))
	}
	// A child outside an unchanged parent is refused before any write.
	n := len(*log)
	if _, err := w.Apply([]Op{{Cgroup: child, Knob: CPUSetCPUs, Value: ab}}); err == nil || len(*log) != n {
		t.Fatalf("child outside parent: err %v, writes %s", err, sinceWrites(log, n))
	}
	// Restore: originals were the inherited a,b; the parent widens first.
	n = len(*log)
	if _, err := w.Restore([]Target{{Cgroup: child, Knob: CPUSetCPUs}, {Cgroup: parent, Knob: CPUSetCPUs}}); err != nil {
		t.Fatal(err)
	}
	if got := sinceWrites(log, n); got != cp(parent)+mustSet(all).String()+" "+cp(child)+mustSet(all).String() {
		t.Errorf("restore: %s", got)
	}
	// Idempotence on the real kernel: the same batch twice writes once.
	apply(Op{Cgroup: child, Knob: CPUSetCPUs, Value: a})
	if got := apply(Op{Cgroup: child, Knob: CPUSetCPUs, Value: a}); got != "" {
		t.Errorf("second identical apply wrote %s", got)
	}
	// ESRCH from a process that has exited is reported, not an error.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	rep, err = w.AddProcs(child, []int{gone.Process.Pid})
	if err != nil || len(rep.Exited) != 1 {
		t.Errorf("exited pid: %+v %v", rep, err)
	}
}

func TestKernelV1MemoryAndCPU(t *testing.T) {
	h := hostV1(t)
	cg := fmt.Sprintf("locus-test-%d-memory", os.Getpid())
	w, log := kernelWriter(t, h, cg)
	if _, err := w.EnsureCgroup(cg); err != nil {
		t.Fatal(err)
	}
	outcome := func(ops ...Op) []Outcome {
		t.Helper()
		rep, err := w.Apply(ops)
		if err != nil {
			t.Fatal(err)
		}
		var out []Outcome
		for _, r := range rep.Results {
			out = append(out, r.Outcome)
		}
		return out
	}
	batch := []Op{{Cgroup: cg, Knob: MemoryLimit, Value: "100000000"}, {Cgroup: cg, Knob: MemorySoftLimit, Value: "50000000"},
		{Cgroup: cg, Knob: CPUQuota, Value: "50000"}, {Cgroup: cg, Knob: CPUShares, Value: "512"}}
	if got := outcome(batch...); !slices.Equal(got, []Outcome{Written, Written, Written, Written}) {
		t.Fatalf("first apply %v", got)
	}
	// The kernel keeps whole pages: 100000000 reads back 99999744; the
	// second apply must still see it as equal.
	if v, _ := h.ReadKnob(cg, MemoryLimit); v != fmt.Sprint(100000000/pageSize*pageSize) {
		t.Errorf("memory.limit_in_bytes reads %s", v)
	}
	n := len(*log)
	if got := outcome(batch...); !slices.Equal(got, []Outcome{Unchanged, Unchanged, Unchanged, Unchanged}) || len(*log) != n {
		t.Fatalf("second apply %v, writes %s", got, sinceWrites(log, n))
	}
	// "max" is -1 on v1 and reads back as PAGE_COUNTER_MAX pages.
	outcome(Op{Cgroup: cg, Knob: MemoryLimit, Value: "max"}, Op{Cgroup: cg, Knob: CPUQuota, Value: "max"})
	if v, _ := h.ReadKnob(cg, MemoryLimit); v != "9223372036854771712" {
		t.Errorf("unlimited memory.limit_in_bytes reads %s", v)
	}
	if got := outcome(Op{Cgroup: cg, Knob: MemoryLimit, Value: "max"}, Op{Cgroup: cg, Knob: CPUQuota, Value: "max"}); !slices.Equal(got, []Outcome{Unchanged, Unchanged}) {
		t.Errorf("unlimited re-apply %v", got)
	}
	// Kernel extensions: written where the file exists, unsupported where not.
	for _, k := range []Knob{MemoryHigh, MemoryMin, MemoryWmarkRatio, MemoryWmarkMinAdj} {
		spec, _ := Lookup(k)
		val := "0"
		if k == MemoryHigh {
			val = "max"
		}
		rep, err := w.Apply([]Op{{Cgroup: cg, Knob: k, Value: val}})
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		_, statErr := os.Stat(filepath.Join(DefaultRoot, "memory", cg, spec.V1.File))
		want := Unsupported
		if statErr == nil {
			want = Unchanged // defaults already hold these values
		}
		t.Logf("%s on this kernel: %s %s", k, rep.Results[0].Outcome, rep.Results[0].Reason)
		if rep.Results[0].Outcome != want && !(statErr == nil && rep.Results[0].Outcome == Written) {
			t.Errorf("%s: outcome %s, want %s (%s)", k, rep.Results[0].Outcome, want, rep.Results[0].Reason)
		}
	}
	pid := startSleep(t)
	if _, err := w.AddProcs(cg, []int{pid}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CPUUsage(cg); err != nil {
		t.Error(err)
	}
	if th, err := h.Threads(cg); err != nil || !slices.Contains(th, pid) {
		t.Errorf("Threads = %v, %v", th, err)
	}
	// Restore puts back what the cgroup was created with.
	targets := []Target{{Cgroup: cg, Knob: MemoryLimit}, {Cgroup: cg, Knob: MemorySoftLimit}, {Cgroup: cg, Knob: CPUQuota}, {Cgroup: cg, Knob: CPUShares}}
	if _, err := w.Restore(targets); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[Knob]string{MemoryLimit: "9223372036854771712", MemorySoftLimit: "9223372036854771712", CPUQuota: "-1", CPUShares: "1024"} {
		if v, _ := h.ReadKnob(cg, k); v != want {
			t.Errorf("restored %s = %s, want %s", k, v, want)
		}
	}
	// A real kernel error names the file and value: a cgroup with a task
	// cannot be removed.
	if err := w.RemoveCgroup(cg); err == nil || !strings.Contains(err.Error(), cg) {
		t.Errorf("removing a cgroup with a task: %v", err)
	}
}

func TestKernelV2Unified(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("real-kernel cgroup test needs root to create cgroups")
	}
	const root = "/sys/fs/cgroup/unified"
	if v, err := Detect(root); err != nil || v != V2 {
		t.Skipf("no cgroup2 mount at %s", root)
	}
	h, err := Open(root, Auto)
	if err != nil {
		t.Fatal(err)
	}
	cg := fmt.Sprintf("locus-test-%d-v2", os.Getpid())
	w, _ := kernelWriter(t, h, cg)
	if _, err := w.EnsureCgroup(cg); err != nil {
		t.Fatal(err)
	}
	pid := startSleep(t)
	if _, err := w.AddProcs(cg, []int{pid}); err != nil {
		t.Fatal(err)
	}
	if p, err := h.Procs(cg); err != nil || !slices.Equal(p, []int{pid}) {
		t.Errorf("Procs = %v, %v", p, err)
	}
	if _, err := h.CPUUsage(cg); err != nil {
		t.Error(err)
	}
	// cpuset is not enabled in this mount: an upstream file is missing, which
	// is an error naming it, not "unsupported".
	if ctrls, _ := h.readFile(filepath.Join(root, "cgroup.controllers")); !strings.Contains(ctrls, "cpuset") {
		if _, err := w.Apply([]Op{{Cgroup: cg, Knob: CPUSetCPUs, Value: "0"}}); err == nil || !strings.Contains(err.Error(), "cpuset.cpus is missing") {
			t.Errorf("cpuset.cpus without the controller: %v", err)
		}
	}
}

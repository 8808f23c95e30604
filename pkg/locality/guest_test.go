//go:build linux

package locality

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology"
)

// Tests that move memory between NUMA nodes. They need two nodes: in the
// NUMA test guest they run; on one-node machines they skip.

// guestMargin replaces the default margin (at least 256 MiB), which would
// leave little room on the guest's nodes of 512 MiB to 1 GiB.
var guestMargin = Margin{MinBytes: 32 << 20}

func TestGuestMigrateRemoteToLocal(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	c := startChild(t, childSpec{mb: 256, bind: 1, cpus: nodeCPUs(t, topo, 0), threads: 2})
	requireOn(t, c, 1)
	res, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: []int{0}}, Options{Margin: guestMargin})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ratio %d%% -> %d%%, moved %d pages, %d remote left, %.1f MB/s, %d calls, longest stall %s",
		res.RatioBefore, res.RatioAfter, res.Moved, res.RemoteLeft, res.Throughput(), res.Calls, res.LongestStall)
	if res.RatioBefore > 10 || res.RatioAfter < 99 {
		t.Errorf("local ratio %d%% -> %d%%, want from under 10%% to at least 99%%", res.RatioBefore, res.RatioAfter)
	}
	// khugepaged may collapse pages onto node 0 while they move, so not
	// every page of the region is counted as moved by the migrator.
	if len(res.Failures()) != 0 || res.Moved < 9*(256<<20/4096)/10 {
		t.Errorf("failures %v, moved %d pages: want none and at least 90%% of 65536", res.Failures(), res.Moved)
	}
	requireOn(t, c, 0)
	requireIntact(t, c)
	exact, err := Reader{}.ExactPages(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	if r := LocalRatio(exact, []int{0}); r < 99 {
		t.Errorf("exact page count %v: local ratio %d%%, want at least 99%%", exact, r)
	}
	// The child's first pages (before it pinned itself) may sit on any node.
	want := fmt.Sprintf("Container redis completed: migrated memory from remote numa: %s to local numa: 0",
		FormatNodeList(res.Before.RemoteNodes([]int{0})))
	if line := res.Outcome("redis").Line(); line != want || !slices.Contains(res.Before.RemoteNodes([]int{0}), 1) {
		t.Errorf("event line %q, want %q (naming node 1)", line, want)
	}
}

func TestGuestProcessExitsMidMigration(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	cpus := nodeCPUs(t, topo, 0)
	t.Run("another process of the container", func(t *testing.T) {
		a := startChild(t, childSpec{mb: 64, bind: 1, cpus: cpus})
		b := startChild(t, childSpec{mb: 64, bind: 1, cpus: cpus})
		first, last := a, b // processes are migrated in pid order
		if b.pid() < a.pid() {
			first, last = b, a
		}
		lastPID := last.pid()
		killOnCall(t, 2, last) // while first is moving
		res, err := Migrate(context.Background(), Request{PIDs: []int{a.pid(), b.pid()}, Local: []int{0}}, Options{Margin: guestMargin})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Failures(); len(got) != 1 || got[0] != (ProcessFailure{PID: lastPID, Err: "No such process"}) {
			t.Fatalf("failures %+v, want pid %d No such process", got, lastPID)
		}
		requireOn(t, first, 0)
		requireIntact(t, first)
		want := fmt.Sprintf("Container app completed: failed to migrate the following processes: failed pid: %d, error: No such process,from remote numa: %s to local numa: 0",
			lastPID, FormatNodeList(res.Before.RemoteNodes([]int{0})))
		if line := res.Outcome("app").Line(); line != want {
			t.Errorf("event line\n got %q\nwant %q", line, want)
		}
	})
	t.Run("the process being moved", func(t *testing.T) {
		c := startChild(t, childSpec{mb: 128, bind: 1, cpus: cpus})
		pid := c.pid()
		killOnCall(t, 3, c)
		res, err := Migrate(context.Background(), Request{PIDs: []int{pid}, Local: []int{0}}, Options{Margin: guestMargin})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Failures(); len(got) != 1 || got[0] != (ProcessFailure{PID: pid, Err: "No such process"}) {
			t.Fatalf("failures %+v, want pid %d No such process", got, pid)
		}
		if res.Moved == 0 || res.Calls < 3 {
			t.Errorf("moved %d pages in %d calls before the exit, want some", res.Moved, res.Calls)
		}
	})
}

func TestGuestCgroupOfManySmallProcesses(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	const root = "/sys/fs/cgroup"
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		t.Skip("needs cgroup v2 at /sys/fs/cgroup (the test guest's default)")
	}
	rel := "locality-test-" + strconv.Itoa(os.Getpid())
	dir := filepath.Join(root, rel)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var kids []*child
	t.Cleanup(func() {
		for _, c := range kids {
			c.kill()
		}
		_ = os.Remove(dir)
	})
	for i := 0; i < 8; i++ {
		c := startChild(t, childSpec{mb: 16, bind: 1, cpus: nodeCPUs(t, topo, 0)})
		kids = append(kids, c)
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(c.pid())), 0); err != nil {
			t.Fatal(err)
		}
	}
	h, err := cgroup.Open(root, cgroup.Auto)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := h.Procs(rel)
	if err != nil || len(pids) != 8 {
		t.Fatalf("cgroup %s holds %v (%v), want the 8 children", rel, pids, err)
	}
	res, err := Migrate(context.Background(), Request{PIDs: pids, Local: []int{0}}, Options{Margin: guestMargin})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("8 processes: ratio %d%% -> %d%%, moved %d pages in %d calls, %.1f MB/s, longest stall %s",
		res.RatioBefore, res.RatioAfter, res.Moved, res.Calls, res.Throughput(), res.LongestStall)
	if len(res.Failures()) != 0 || len(res.Processes) != 8 {
		t.Fatalf("failures %v, %d process results", res.Failures(), len(res.Processes))
	}
	for _, c := range kids {
		requireOn(t, c, 0)
		requireIntact(t, c)
	}
	// Pages the children share (the test binary's text) stay where they
	// are, so the ratio is not quite 100 with such small processes.
	if res.RatioAfter < 95 {
		t.Errorf("local ratio after %d%%, want at least 95%%", res.RatioAfter)
	}
}

func TestGuestMultiThreadedProcess(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	c := startChild(t, childSpec{mb: 128, bind: 1, cpus: nodeCPUs(t, topo, 0), threads: 4})
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(c.pid()) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, e := range tasks {
		tids = append(tids, atoi(e.Name()))
	}
	// Pass every thread, as cgroup.threads lists them: the process must be
	// measured and moved once.
	res, err := Migrate(context.Background(), Request{PIDs: tids, Local: []int{0}}, Options{Margin: guestMargin})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) != 1 || res.Before.Total() > 2*(128<<20/4096) {
		t.Fatalf("%d threads gave %d process results and %d pages before: counted more than once", len(tids), len(res.Processes), res.Before.Total())
	}
	if res.RatioAfter < 99 {
		t.Errorf("ratio after %d%%, want at least 99%%", res.RatioAfter)
	}
	requireOn(t, c, 0)
	requireIntact(t, c)
}

func TestGuestCpusetOnEveryNodeIsSkipped(t *testing.T) {
	multiNode(t)
	quietBalancer(t)
	c := startChild(t, childSpec{mb: 32, bind: 1})
	nodes, _ := MemoryNodes("")
	res, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: nodes}, Options{Margin: guestMargin})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != ReasonNoTargetNUMA || res.Moved != 0 || res.Calls != 0 {
		t.Fatalf("got skipped %q, moved %d in %d calls: want skipped, nothing moved", res.Skipped, res.Moved, res.Calls)
	}
	requireOn(t, c, 1)
	reason, msg := PodOutcome{Containers: []ContainerOutcome{res.Outcome("c")}}.Event()
	if reason != EventSkipped || msg != "no target numa" {
		t.Errorf("event %s %q", reason, msg)
	}
}

func TestGuestNearlyFullTargetStopsAtMargin(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	margin := Margin{MinBytes: 32 << 20}
	mem, err := ReadNodeMemory("", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	// Leave node 0 about 48 MiB above the margin, then ask to move 128 MiB.
	hogMB := int((mem[0].Free - margin.MinBytes - 48<<20) >> 20)
	if hogMB < 64 {
		t.Skipf("node 0 has only %d MiB free", mem[0].Free>>20)
	}
	startChild(t, childSpec{mb: hogMB, bind: 0})
	c := startChild(t, childSpec{mb: 128, bind: 1, cpus: nodeCPUs(t, topo, 0)})
	res, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: []int{0}}, Options{Margin: margin})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := ReadNodeMemory("", []int{0})
	t.Logf("hog %d MiB; moved %d pages, %d remote left, stopped %v; node 0 free %d MiB after (margin %d MiB)",
		hogMB, res.Moved, res.RemoteLeft, res.Stopped, after[0].Free>>20, margin.MinBytes>>20)
	if !slices.Equal(res.Stopped, []int{0}) || res.Moved == 0 || res.Moved >= 128<<20/4096 || res.RemoteLeft == 0 {
		t.Fatalf("moved %d pages, %d left remote, stopped %v: want a partial move stopped on node 0", res.Moved, res.RemoteLeft, res.Stopped)
	}
	// Others allocate too, so allow a little below the margin, not more.
	if after[0].Free+8<<20 < margin.MinBytes {
		t.Errorf("node 0 free %d MiB after the move, margin %d MiB", after[0].Free>>20, margin.MinBytes>>20)
	}
	line := res.Outcome("c").Line()
	if !strings.HasSuffix(line, "stopped at the free-memory margin on local numa: 0") {
		t.Errorf("event line %q does not say where it stopped", line)
	}
	requireIntact(t, c)
}

// TestGuestMigrateWithKernelBalancing leaves the kernel's NUMA balancing on
// while a busy process is migrated: both move pages at once, status queries
// see pages in flux, and the result must still be local and intact.
func TestGuestMigrateWithKernelBalancing(t *testing.T) {
	topo := multiNode(t)
	balancerOn(t)
	c := startChild(t, childSpec{mb: 128, bind: 1, cpus: nodeCPUs(t, topo, 0), threads: 2})
	res, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: []int{0}}, Options{Margin: guestMargin})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ratio %d%% -> %d%%, moved %d pages (the kernel moved others), %d calls, busy %d",
		res.RatioBefore, res.RatioAfter, res.Moved, res.Calls, res.Processes[0].Busy)
	if res.RatioAfter < 99 || len(res.Failures()) != 0 {
		t.Errorf("ratio after %d%%, failures %v", res.RatioAfter, res.Failures())
	}
	requireIntact(t, c)
}

// TestGuestIdleMemoryHiddenByKernelBalancing turns NUMA balancing on and
// waits until it has mapped the idle remote region PROT_NONE, which hides
// its pages from move_pages status queries on this kernel. The migrator
// must still move all of it.
func TestGuestIdleMemoryHiddenByKernelBalancing(t *testing.T) {
	hiddenMovedHome(t, -1)
}

// The same, with the migrator started on a CPU of the node the pages come
// from. Its touch of a hidden page takes the NUMA hinting fault, and the
// kernel moves a page to the faulting CPU's node at its second fault from
// there: run from that node, the migrator pulled pages it had moved home
// back (3300 of 16 384 left remote in a run). It moves them from the CPUs
// of their new node instead (migrate_touchcpu.go).
func TestGuestHiddenMemoryMovedHomeFromARemoteCPU(t *testing.T) {
	hiddenMovedHome(t, 1)
}

// hiddenMovedHome runs the migrator on the CPUs of node from (-1: where it
// is) over a child whose idle region on node 1 NUMA balancing has hidden.
func hiddenMovedHome(t *testing.T, from int) {
	topo := multiNode(t)
	balancerOn(t)
	c := startChild(t, childSpec{mb: 64, bind: 1, cpus: nodeCPUs(t, topo, 0), spin: true})
	var got map[int32]int
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got = c.regionNodes(t)
		if got[1] < c.bytes/4096 {
			break
		}
		if time.Now().After(deadline) {
			t.Skip("NUMA balancing hid no page within 60 s: nothing to prove on this kernel")
		}
	}
	t.Logf("before: region status %v", got)
	if from >= 0 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpus, err := topology.ParseCPUList(nodeCPUs(t, topo, from))
		if err != nil {
			t.Fatal(err)
		}
		var set unix.CPUSet
		for _, cpu := range cpus.UnsortedList() {
			set.Set(cpu)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			t.Fatalf("run the migrator on node %d's CPUs %s: %v", from, cpus, err)
		}
	}
	// The balancer keeps sampling while the pages move, so it can hide a few
	// again behind the migrator; the memory locality worker runs again for
	// those, and so may the test, once. Without unhiding, each pass would
	// leave every hidden page where it was.
	var res Result
	for pass := 1; pass <= 2; pass++ {
		r, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: []int{0}}, Options{Margin: guestMargin})
		if err != nil {
			t.Fatal(err)
		}
		res = r
		t.Logf("pass %d: ratio %d%% -> %d%%, moved %d pages, unhid %d, %d calls, %d left remote", pass, res.RatioBefore,
			res.RatioAfter, res.Moved, res.Processes[0].Unhidden, res.Calls, res.RemoteLeft)
		if res.RemoteLeft <= 64 {
			break
		}
	}
	if res.RatioAfter < 99 || res.RemoteLeft > 64 {
		t.Errorf("ratio after %d%%, %d pages left remote", res.RatioAfter, res.RemoteLeft)
	}
	requireIntact(t, c)
}

//go:build linux

package locality

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/topology"
)

// Tests on the real kernel of this machine; any number of NUMA nodes.

func plenty(nodes []int) (map[int]NodeMemory, error) {
	out := map[int]NodeMemory{}
	for _, n := range nodes {
		out[n] = NodeMemory{Total: 1 << 40, Free: 1 << 39}
	}
	return out, nil
}

func TestKernelMeasureChild(t *testing.T) {
	c := startChild(t, childSpec{mb: 64, bind: -1})
	r := Reader{}
	pm, err := r.Process(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	if total := pm.Pages.Total(); total < 64<<20/4096 {
		t.Fatalf("numa_maps counts %d pages, want at least the 16384 the child filled", total)
	}
	exact, err := r.ExactPages(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	// Both count the same resident pages; allow a little drift, since the
	// child's runtime allocates between the two reads.
	if a, b := pm.Pages.Total(), exact.Total(); b+512 < a || a+512 < b {
		t.Errorf("numa_maps %v vs move_pages query %v", pm.Pages, exact)
	}
	t.Logf("child %d: numa_maps %v, exact %v", c.pid(), pm.Pages, exact)
	// Every page of the filled region is on a node the machine has.
	nodes, err := MemoryNodes("")
	if err != nil {
		t.Fatal(err)
	}
	for st, n := range c.regionNodes(t) {
		if !slices.Contains(nodes, int(st)) {
			t.Errorf("%d pages of the region report status %d, want one of nodes %v", n, st, nodes)
		}
	}
}

func TestKernelQueryReportsNodeZero(t *testing.T) {
	nodes, err := MemoryNodes("")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0] != 0 {
		t.Skipf("memory nodes %v: this test is for one-node machines (the guest tests cover more)", nodes)
	}
	c := startChild(t, childSpec{mb: 16, bind: -1})
	got := c.regionNodes(t)
	if got[0] != 16<<20/4096 || len(got) != 1 {
		t.Fatalf("region status %v, want all 4096 pages on node 0", got)
	}
}

func TestKernelMigrateOneNodeIsNoop(t *testing.T) {
	nodes, _ := MemoryNodes("")
	if len(nodes) != 1 {
		t.Skipf("memory nodes %v: one-node behaviour only", nodes)
	}
	c := startChild(t, childSpec{mb: 16, bind: -1})
	res, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: []int{0}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != ReasonNoTargetNUMA || res.Moved != 0 || res.RemoteLeft != 0 || res.RatioAfter != 100 || res.Calls != 0 {
		t.Fatalf("got %+v, want skipped (%s) with nothing moved and ratio 100", res, ReasonNoTargetNUMA)
	}
}

// TestKernelMovePathOnNodeZero runs the whole move_pages machinery (status
// queries, batches, the controller, the margin guard, verification) against
// the real kernel by "moving" pages from node 0 to node 0, which the kernel
// accepts and reports as done. The data must be intact afterwards.
func TestKernelMovePathOnNodeZero(t *testing.T) {
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	c := startChild(t, childSpec{mb: 32, bind: 0, cpus: nodeCPUs(t, topo, 0), threads: 1})
	pm, err := Reader{}.Process(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	want := pm.Pages[0]
	plan := Plan{Local: []int{0}, Processes: []ProcessPlan{{PID: c.pid(), Moves: []Move{{From: 0, To: 0, Pages: want}}}}}
	for _, strategy := range []Strategy{StrategyMovePages, StrategyMigratePages} {
		res := Execute(context.Background(), plan, Options{Strategy: strategy, FreeMemory: plenty})
		pr := res.Processes[0]
		if pr.Err != "" || res.Calls == 0 || res.LongestStall <= 0 {
			t.Fatalf("%s: %+v", strategy, pr)
		}
		if strategy == StrategyMovePages && res.Moved < (32<<20)/4096 {
			t.Errorf("%s: %d pages reported moved, want at least the child's 8192", strategy, res.Moved)
		}
		t.Logf("%s: %d pages in %d calls, longest %s, %.0f MB/s", strategy, res.Moved, res.Calls, res.LongestStall, res.Throughput())
	}
	if got := c.checksum(t); got != c.sum {
		t.Fatalf("checksum %x after the move, want %x", got, c.sum)
	}
}

func TestKernelMarginGuardStopsTarget(t *testing.T) {
	// Bound to node 0: the plan moves pages from node 0, which must have some.
	c := startChild(t, childSpec{mb: 8, bind: 0})
	plan := Plan{Local: []int{0}, Processes: []ProcessPlan{{PID: c.pid(), Moves: []Move{{From: 0, To: 0, Pages: 1 << 20}}}}}
	full := func(nodes []int) (map[int]NodeMemory, error) {
		out := map[int]NodeMemory{}
		for _, n := range nodes {
			out[n] = NodeMemory{Total: 1 << 30, Free: 100 << 20} // below the 256 MiB margin
		}
		return out, nil
	}
	res := Execute(context.Background(), plan, Options{Margin: DefaultMargin, FreeMemory: full})
	if res.Moved != 0 || res.Calls != 0 || !slices.Equal(res.Stopped, []int{0}) {
		t.Fatalf("moved %d in %d calls, stopped %v: want nothing moved and node 0 stopped", res.Moved, res.Calls, res.Stopped)
	}
}

func TestKernelExitedProcessIsNoSuchProcess(t *testing.T) {
	c := startChild(t, childSpec{bind: -1})
	live := startChild(t, childSpec{mb: 4, bind: -1})
	pid := c.pid()
	c.kill()
	plan := Plan{Local: []int{0}, Processes: []ProcessPlan{
		{PID: pid, Moves: []Move{{From: 1, To: 0, Pages: 10}}},
		{PID: live.pid(), Moves: []Move{{From: 0, To: 0, Pages: 10}}},
	}}
	for _, strategy := range []Strategy{StrategyMovePages, StrategyMigratePages} {
		res := Execute(context.Background(), plan, Options{Strategy: strategy, FreeMemory: plenty})
		if got := res.Failures(); len(got) != 1 || got[0] != (ProcessFailure{PID: pid, Err: "No such process"}) {
			t.Errorf("%s: failures %+v, want pid %d No such process", strategy, got, pid)
		}
		if res.Processes[1].Err != "" {
			t.Errorf("%s: the live process failed too: %+v", strategy, res.Processes[1])
		}
	}
	// Through Migrate: the exited pid is reported, the live one measured.
	res, err := Migrate(context.Background(), Request{PIDs: []int{pid, live.pid()}, Local: []int{0}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Failures(); len(got) != 1 || got[0].PID != pid || got[0].Err != "No such process" {
		t.Errorf("Migrate failures %+v", got)
	}
	if res.Before.Total() == 0 {
		t.Error("the live process was not measured")
	}
}

func TestKernelZombieIsNoSuchProcess(t *testing.T) {
	c := startChild(t, childSpec{bind: -1})
	if err := c.cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: a zombie whose memory is gone.
	deadline := time.Now().Add(5 * time.Second)
	for !exited("", c.pid()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	plan := Plan{Local: []int{0}, Processes: []ProcessPlan{{PID: c.pid(), Moves: []Move{{From: 1, To: 0, Pages: 10}}}}}
	res := Execute(context.Background(), plan, Options{FreeMemory: plenty})
	if got := res.Failures(); len(got) != 1 || got[0].Err != "No such process" {
		t.Fatalf("failures %+v, want No such process", got)
	}
}

func TestKernelThreadsCountOnce(t *testing.T) {
	c := startChild(t, childSpec{mb: 8, bind: -1, threads: 3})
	tasks, err := os.ReadDir("/proc/" + itoa(c.pid()) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, e := range tasks {
		tids = append(tids, atoi(e.Name()))
	}
	if len(tids) < 4 {
		t.Fatalf("child has %d threads, want at least 4", len(tids))
	}
	mems, gone, err := Reader{}.Processes(tids)
	if err != nil || len(gone) != 0 {
		t.Fatal(err, gone)
	}
	if len(mems) != 1 || mems[0].PID != c.pid() {
		t.Fatalf("%d threads read as %d processes, want the one process %d", len(tids), len(mems), c.pid())
	}
}

func TestKernelProcRootIsHonoured(t *testing.T) {
	_, err := Reader{ProcRoot: t.TempDir()}.Process(os.Getpid())
	if err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Fatalf("empty proc root: %v, want no such process", err)
	}
}

// TestKernelUnhideTouchesOnlyPresentPages feeds the unhide step statuses
// that claim "no page" for every page of a region whose first half is
// resident: it must touch and re-query the resident half only, and leave
// the absent half unfaulted.
func TestKernelUnhideTouchesOnlyPresentPages(t *testing.T) {
	const pages = 16
	mem, err := unix.Mmap(-1, 0, pages*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Madvise(mem, unix.MADV_NOHUGEPAGE); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < pages/2; i++ {
		mem[i*4096] = 1
	}
	addrs := make([]uintptr, pages)
	status := make([]int32, pages)
	for i := range addrs {
		addrs[i] = uintptr(unsafe.Pointer(&mem[0])) + uintptr(i*4096)
		status[i] = -int32(unix.ENOENT)
	}
	m := &mover{pid: os.Getpid(), pageSize: 4096}
	m.unhide(addrs, status)
	if m.fatal != nil {
		t.Fatal(m.fatal)
	}
	if m.res.Unhidden != pages/2 {
		t.Errorf("unhid %d pages, want the %d resident ones", m.res.Unhidden, pages/2)
	}
	for i, st := range status {
		if resident := i < pages/2; resident != (st >= 0) {
			t.Errorf("page %d: status %d after unhide (resident %v)", i, st, resident)
		}
	}
	present, err := m.presentPages(addrs[0], addrs[pages-1])
	if err != nil {
		t.Fatal(err)
	}
	if !present(addrs[0]) || present(addrs[pages-1]) {
		t.Error("the absent half was faulted in, or pagemap misread")
	}
}

package agent

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
)

// guestLocus is where the NUMA test guest installs the locus binary.
const guestLocus = "/usr/bin/locus"

// pagesOf measures a process: its base pages on the local nodes and in all.
func pagesOf(t *testing.T, pid int, local []int) (onLocal, total uint64) {
	t.Helper()
	mems, gone, err := locality.Reader{}.Processes([]int{pid})
	if err != nil || len(gone) > 0 || len(mems) != 1 {
		t.Fatalf("measure process %d: %v (gone %v)", pid, err, gone)
	}
	return mems[0].Pages.On(local), mems[0].Pages.Total()
}

// TestGuestLocalityMovesRemoteMemory runs the standalone agent on the real
// kernel: a command workload bound to a CPU of one node holds 64 MiB that
// sits on the other node; annotated bestEffort, the agent's migration makes
// it local, records the seed's Event, keeps the data intact, and does not
// run again.
func TestGuestLocalityMovesRemoteMemory(t *testing.T) {
	parent := realV2(t)
	if nodes, err := locality.MemoryNodes(""); err != nil || len(nodes) < 2 {
		skipOrFail(t, "needs two NUMA nodes with memory, found %v (%v)", nodes, err)
	}
	if _, err := os.Stat(guestLocus); err != nil {
		skipOrFail(t, "needs %s to run `locus stress`: %v", guestLocus, err)
	}
	if _, err := exec.LookPath("migratepages"); err != nil {
		skipOrFail(t, "needs migratepages (numactl) to place the memory remotely: %v", err)
	}
	// unrestrictedMems leaves cpuset.mems at every node: with the mems
	// narrowed, cgroup v2 would move the memory itself.
	base := fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
unrestrictedMems: true
cgroupParent: %s
workloads:
- name: mem
  command: [%s, stress, --memory, 64Mi, --verify, --touch-interval, 500ms]
  qosClass: LS
  resources: {limits: {cpu: "1"}}
  annotations:
    cpuset-scheduler: "true"
`, parent, guestLocus)
	a, cfgFile := realV2Agent(t, base, func(o *Options) { o.LocalityMargin = locality.Margin{MinBytes: 32 << 20} })
	mustReconcile(t, a)
	ck, _ := a.store.Load()
	p := ck.Workloads["mem"].Started
	if p == nil {
		t.Fatal("mem not started")
	}
	local := a.topo.NodesOf(ck.Assignments["mem"].CPUs)
	if len(local) != 1 {
		t.Fatalf("mem bound to %s, nodes %v: want one node", ck.Assignments["mem"].CPUs, local)
	}
	remote := 1 - local[0]
	pollFor(t, 60*time.Second, "64 MiB resident", func() bool { _, total := pagesOf(t, p.PID, local); return total >= 64<<20/4096 })
	if out, err := exec.Command("migratepages", fmt.Sprint(p.PID), fmt.Sprint(local[0]), fmt.Sprint(remote)).CombinedOutput(); err != nil {
		t.Fatalf("migratepages: %v\n%s", err, out)
	}
	on, total := pagesOf(t, p.PID, local)
	t.Logf("before: %d of %d pages on local node %d", on, total, local[0])
	if total-on < 64<<20/4096 {
		t.Fatalf("after migratepages only %d of %d pages are remote; the test needs 64 MiB remote", total-on, total)
	}

	// Annotated bestEffort: the next reconcile moves it back, off the loop.
	ann := "    koordinator.sh/memoryLocality: '{\"policy\": \"bestEffort\"}'\n"
	if err := writeSettled(cfgFile, []byte(base+ann)); err != nil {
		t.Fatal(err)
	}
	mustReconcile(t, a)
	if a.loc == nil {
		t.Fatal("no migration was scheduled")
	}
	waited := make(chan struct{})
	go func() { a.loc.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(3 * time.Minute):
		t.Fatal("the migration did not end within 3 minutes")
	}
	on, total = pagesOf(t, p.PID, local)
	t.Logf("after the agent's migration: %d of %d pages on local node %d", on, total, local[0])
	if on*100 < total*99 {
		t.Errorf("only %d of %d pages local, want ≥ 99 %%", on, total)
	}
	// One container: the seed's one-line MemoryLocalitySuccess form.
	re := regexp.MustCompile(fmt.Sprintf(`^migrated memory from remote numa: %d to local numa: %d, `+
		`cur local memory ratio (99|100), rest remote memory pages \d+$`, remote, local[0]))
	var got []eventlog.Event
	evs, err := eventlog.Read(a.opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if strings.HasPrefix(e.Reason, "MemoryLocality") {
			got = append(got, e)
		}
	}
	for _, e := range got {
		t.Logf("event %s %s: %q", e.Type, e.Reason, e.Message)
	}
	if len(got) != 1 || got[0].Reason != locality.EventSuccess || got[0].Workload != "mem" || !re.MatchString(got[0].Message) {
		t.Fatalf("memory locality events %+v, want one MemoryLocalitySuccess matching %s", got, re)
	}
	// With the kernel's NUMA balancing on (--numa-balancing on) the kernel
	// moves some of the touched pages itself, first.
	balancing := os.Getenv("LOCUS_NUMAVM_NUMA_BALANCING") == "on"
	if moved, _ := metricValue(t, a.metrics.Reg, "locus_memory_pages_migrated_total", "workload", "mem"); moved < 64<<20/4096*99/100 && !balancing {
		t.Errorf("pages migrated = %v, want at least 99 %% of 64 MiB", moved)
	}
	if stall, ok := metricValue(t, a.metrics.Reg, "locus_memory_migration_longest_stall_seconds", "workload", "mem"); !ok || stall <= 0 {
		t.Errorf("longest stall = %v (present %v)", stall, ok)
	}

	// The data survived: stress re-checks its checksum every touch and exits
	// on a mismatch. And a one-shot migration does not run again.
	time.Sleep(time.Second)
	if !a.procAlive(p) {
		t.Fatal("the workload exited after the migration (a checksum mismatch ends it); see its log under the state dir")
	}
	mustReconcile(t, a)
	a.loc.Wait()
	if evs, _ := eventlog.Read(a.opts.StateDir); countReason(evs, locality.EventSuccess) != 1 {
		t.Errorf("a one-shot migration ran again: %d MemoryLocalitySuccess events", countReason(evs, locality.EventSuccess))
	}
	st := a.pub.Current()
	for _, w := range st.Workloads {
		if w.Name == "mem" && (w.MemoryLocality == nil || w.MemoryLocality.LocalRatio == nil || *w.MemoryLocality.LocalRatio < 99) {
			t.Errorf("status memoryLocality %+v", w.MemoryLocality)
		}
	}
}

func countReason(evs []eventlog.Event, reason string) int {
	n := 0
	for _, e := range evs {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

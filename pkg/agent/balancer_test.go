package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/locality"
)

// balHarness is an agent with the NUMA balancer on the two-node fixture
// (CPUs 0-1 node 0, 2-3 node 1), four shared-pool workloads in pods/*, and
// one VM cgroup vms/vm1 found under --numa-balancer-cgroups. The test moves
// the clock and writes the counters the kernel would.
type balHarness struct {
	*harness
	proc  string
	clk   *fakeClock
	f     *fakeMigrator
	usage map[string]time.Duration // CPU time per cgroup
	ticks map[int][2]uint64        // busy and total ticks per CPU
}

const balConfig = `apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
workloads:
- {name: a, cgroup: pods/a, qosClass: LS}
- {name: b, cgroup: pods/b, qosClass: LS}
- {name: c, cgroup: pods/c, qosClass: LS}
- {name: d, cgroup: pods/d, qosClass: LS}
`

var balGroups = []string{"pods/a", "pods/b", "pods/c", "pods/d", "vms/vm1"}

func newBalHarness(t *testing.T, tree *cgroupTree, stateDir string, on bool) *balHarness {
	t.Helper()
	b := &balHarness{proc: filepath.Join(t.TempDir(), "proc"), clk: &fakeClock{t: locT0}, f: &fakeMigrator{},
		usage: map[string]time.Duration{}, ticks: map[int][2]uint64{}}
	if err := os.MkdirAll(b.proc, 0o755); err != nil {
		t.Fatal(err)
	}
	b.writeStat(t)
	b.harness = locAgent(t, tree, twoNodes, balConfig, stateDir, b.f, b.clk, func(o *Options) {
		o.ProcRoot = b.proc
		o.NUMABalancer = balancerloop.Options{Enabled: on, Interval: 10 * time.Second, Cgroups: []string{"vms"}, NarrowMems: true,
			Config: balancer.Config{MinDwell: 30 * time.Second, MinWindows: 1}}
	})
	return b
}

func newBalTree(t *testing.T) *cgroupTree {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.set("", "", "cpuset.mems", "0-1")
	tree.mkcg(balGroups...)
	tree.set("", "vms/vm1", "cpuset.mems", "0")
	for i, cg := range balGroups {
		tree.set("", cg, "cgroup.procs", fmt.Sprint(1001+i))
		tree.set("", cg, "cpu.stat", "usage_usec 0")
		tree.set("", cg, "memory.numa_stat", "anon N0=0 N1=0")
		tree.set("", cg, "pids.current", "2")
	}
	return tree
}

func (b *balHarness) writeStat(t *testing.T) {
	var sb strings.Builder
	for c := range 4 {
		v := b.ticks[c]
		fmt.Fprintf(&sb, "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", c, v[0], v[1]-v[0])
	}
	if err := os.WriteFile(filepath.Join(b.proc, "stat"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// window lets d pass with each cgroup using cpu[cg] CPUs, spread evenly
// over its cpuset, and holding 64 MiB on node mem[cg].
func (b *balHarness) window(d time.Duration, cpu map[string]float64, mem map[string]int) {
	t := b.t.(*testing.T)
	busy := make([]float64, 4)
	for _, cg := range balGroups {
		b.usage[cg] += time.Duration(cpu[cg] * float64(d))
		b.tree.set("", cg, "cpu.stat", fmt.Sprintf("usage_usec %d", b.usage[cg].Microseconds()))
		nodes := [2]int{}
		nodes[mem[cg]] = 64 << 20
		b.tree.set("", cg, "memory.numa_stat", fmt.Sprintf("anon N0=%d N1=%d", nodes[0], nodes[1]))
		set, _ := cpuset.Parse(b.tree.get("", cg, "cpuset.cpus"))
		if set.IsEmpty() {
			set = cpuset.New(0, 1, 2, 3)
		}
		for _, c := range set.List() {
			busy[c] += cpu[cg] / float64(set.Size())
		}
	}
	const hz = 100
	for c := range 4 {
		v := b.ticks[c]
		total := uint64(d.Seconds() * hz)
		b.ticks[c] = [2]uint64{v[0] + uint64(min(busy[c], 1)*float64(total)), v[1] + total}
	}
	b.writeStat(t)
	b.clk.t = b.clk.t.Add(d)
}

func (b *balHarness) cpus(cg string) string { return b.tree.get("", cg, "cpuset.cpus") }
func (b *balHarness) mems(cg string) string { return b.tree.get("", cg, "cpuset.mems") }

func (b *balHarness) reasons(prefix string) []string {
	var out []string
	for _, e := range b.events() {
		if strings.HasPrefix(e.Reason, prefix) {
			out = append(out, e.Reason+" "+e.Workload+": "+e.Message)
		}
	}
	return out
}

var busyAll = map[string]float64{"pods/a": 1, "pods/b": 1, "pods/c": 1, "pods/d": 1, "vms/vm1": 0}
var memAt = map[string]int{"pods/a": 1, "pods/b": 0, "pods/c": 0, "pods/d": 1, "vms/vm1": 0}

// memAll0 is every group's memory first touched on node 0.
var memAll0 = map[string]int{}

// homing moves a group's memory to the run's first local node, as the
// kernel would, and counts runs per group (by pid).
func homing(b *balHarness) *hookMigrator {
	return &hookMigrator{seen: map[int]int{}, onRun: func(pid, n int, local []int) {
		cg := balGroups[pid-1001]
		nodes := [2]int{}
		nodes[local[0]] = 64 << 20
		b.tree.set("", cg, "memory.numa_stat", fmt.Sprintf("anon N0=%d N1=%d", nodes[0], nodes[1]))
	}}
}

func TestBalancerPlacesMigratesAndNarrows(t *testing.T) {
	b := newBalHarness(t, newBalTree(t), "", true)
	m := homing(b)
	b.a.loc = newLocalityRunner(b.a, m)
	b.settle() // the first sample: nothing decided yet
	if got := b.cpus("pods/a"); got != "0-3" {
		t.Fatalf("before a window: pods/a cpus %q, want the shared pool", got)
	}
	b.window(10*time.Second, busyAll, memAll0)
	b.settle()
	want := map[string]string{"pods/a": "0-1", "pods/b": "2-3", "pods/c": "0-1", "pods/d": "2-3", "vms/vm1": "0-1"}
	for cg, cpus := range want {
		if got := b.cpus(cg); got != cpus {
			t.Errorf("%s cpus %q, want %q", cg, got, cpus)
		}
		// Memory home already: mems narrowed at once; else both nodes
		// until the memory moved.
		if got, wantMems := b.mems(cg), map[string]string{"0-1": "0", "2-3": "0-1"}[cpus]; got != wantMems {
			t.Errorf("%s mems %q, want %q", cg, got, wantMems)
		}
	}
	placed := b.reasons("NUMABalancerPlaced")
	if len(placed) != 5 || !strings.HasPrefix(placed[0], "NUMABalancerPlaced a: placed on node0: node0 1.0 of 2 CPUs (50%); 64Mi of its 64Mi memory local") {
		t.Fatalf("placement events %q", placed)
	}
	// The two groups away from their memory were migrated; the next
	// reconcile narrows their mems.
	if m.seen[1002] != 1 || m.seen[1004] != 1 || len(m.seen) != 2 {
		t.Fatalf("runs per pid %v, want one for b and one for d", m.seen)
	}
	b.settle()
	for cg, cpus := range want {
		if got, wantMems := b.mems(cg), map[string]string{"0-1": "0", "2-3": "1"}[cpus]; got != wantMems {
			t.Errorf("%s mems %q, want %q once its memory moved", cg, got, wantMems)
		}
	}
	if len(m.seen) != 2 || m.seen[1002] != 1 {
		t.Fatalf("runs after settling %v, want still one each", m.seen)
	}
	if ev := b.reasons("MemoryLocalitySuccess"); len(ev) != 2 { // one container each: the one-line form
		t.Fatalf("memory locality events %q, want b's and d's", ev)
	}
	ws := workloadStatus(t, b.harness, "b")
	if ws.CPUs != "2-3" || ws.Mems != "1" || !slices.Equal(ws.NUMANodes, []int{1}) || ws.Pool != "shared" {
		t.Fatalf("status of b: %+v", ws)
	}
	if v, ok := metricValue(t, b.a.metrics.Reg, "locus_numa_balancer_group_partition", "group", "b", "partition", "node1"); !ok || v != 1 {
		t.Fatalf("group partition metric %v %v", v, ok)
	}
	if v, _ := metricValue(t, b.a.metrics.Reg, "locus_numa_balancer_partition_groups", "partition", "node0"); v != 3 {
		t.Fatalf("node0 groups metric %v", v)
	}
	// At rest nothing moves and nothing is written.
	before := b.tree.snapshot()
	stat, _ := os.Stat(filepath.Join(b.opts.StateDir, balancerloop.File))
	home := map[string]int{"pods/b": 1, "pods/d": 1}
	for range 3 {
		b.window(10*time.Second, busyAll, home)
		if res := b.reconcile(); res.Writes != 0 {
			t.Fatalf("a reconcile at rest wrote %d files", res.Writes)
		}
	}
	after := b.tree.snapshot()
	for k, v := range before {
		if !strings.Contains(k, "cpu.stat") && !strings.Contains(k, "numa_stat") && after[k] != v {
			t.Errorf("%s changed at rest: %q -> %q", k, v, after[k])
		}
	}
	if stat2, _ := os.Stat(filepath.Join(b.opts.StateDir, balancerloop.File)); !stat2.ModTime().Equal(stat.ModTime()) {
		t.Error("the balancer's record was rewritten at rest")
	}
}

func TestBalancerOverflowsIntoIdleNode(t *testing.T) {
	b := newBalHarness(t, newBalTree(t), "", true)
	b.settle()
	b.window(10*time.Second, busyAll, memAt)
	b.settle()
	// a and d (node1) and the VM go idle; b and c want more than node0.
	busy := map[string]float64{"pods/b": 1.2, "pods/c": 1.2}
	b.window(10*time.Second, busy, memAt)
	b.settle()
	if got := b.cpus("pods/b"); got != "0-3" {
		t.Fatalf("pods/b cpus %q, want the whole pool while node0 is saturated", got)
	}
	if got := b.cpus("pods/a"); got != "2-3" {
		t.Fatalf("pods/a cpus %q: an idle partition's groups stay", got)
	}
	if ev := b.reasons("NUMABalancerOverflow"); len(ev) != 1 || !strings.Contains(ev[0], "partition node0 is saturated") {
		t.Fatalf("overflow events %q", ev)
	}
}

func TestBalancerRestartAndDisable(t *testing.T) {
	tree := newBalTree(t)
	b := newBalHarness(t, tree, "", true)
	b.settle()
	b.window(10*time.Second, busyAll, memAt)
	b.settle()
	b.settle()
	dir := b.opts.StateDir
	b.a.Close()
	// Restarted: the placements hold from the first reconcile.
	b2 := newBalHarness(t, tree, dir, true)
	if res := b2.reconcile(); res.Writes != 0 {
		t.Fatalf("the restarted agent wrote %d files", res.Writes)
	}
	if got := b2.cpus("pods/a"); got != "2-3" {
		t.Fatalf("after a restart pods/a cpus %q", got)
	}
	b2.a.Close()
	// Off: the workloads get the pool back and the VM its own cpuset.
	b3 := newBalHarness(t, tree, dir, false)
	b3.reconcile()
	for _, cg := range []string{"pods/a", "pods/b"} {
		if b3.cpus(cg) != "0-3" || b3.mems(cg) != "0-1" {
			t.Errorf("%s: cpus %q mems %q, want the shared pool's", cg, b3.cpus(cg), b3.mems(cg))
		}
	}
	if b3.cpus("vms/vm1") != "0-3" || b3.mems("vms/vm1") != "0" {
		t.Errorf("vms/vm1: cpus %q mems %q, want its originals 0-3 and 0", b3.cpus("vms/vm1"), b3.mems("vms/vm1"))
	}
	if _, err := os.Stat(filepath.Join(dir, balancerloop.File)); !os.IsNotExist(err) {
		t.Errorf("the record is still there: %v", err)
	}
	if ev := b3.reasons("NUMABalancerDisabled"); len(ev) != 1 {
		t.Errorf("disable events %q", ev)
	}
}

func TestBalancerOffUnderOnce(t *testing.T) {
	tree := newBalTree(t)
	b := newBalHarness(t, tree, "", true)
	b.a.opts.Once = true
	b.reconcile()
	if got := b.cpus("pods/a"); got != "0-3" {
		t.Fatalf("under --once pods/a cpus %q", got)
	}
	if _, err := os.Stat(filepath.Join(b.opts.StateDir, balancerloop.File)); !os.IsNotExist(err) {
		t.Fatalf("under --once the record was written: %v", err)
	}
}

// hookMigrator counts runs per process (by first pid) and calls onRun
// with the run's number, so a test can move the memory the cgroup shows.
type hookMigrator struct {
	mu    sync.Mutex
	seen  map[int]int
	onRun func(pid, n int, local []int)
}

func (m *hookMigrator) Migrate(ctx context.Context, req locality.Request, opts locality.Options) (locality.Result, error) {
	m.mu.Lock()
	m.seen[req.PIDs[0]]++
	n := m.seen[req.PIDs[0]]
	m.mu.Unlock()
	m.onRun(req.PIDs[0], n, req.Local)
	return (&fakeMigrator{}).Migrate(ctx, req, opts)
}

func TestBalancerNarrowsOnlyWhenLocal(t *testing.T) {
	b := newBalHarness(t, newBalTree(t), "", true)
	// b and d go to node 1, away from their memory: d's is home after its
	// second run; b never gets more than half of it home.
	home := homing(b)
	m := &hookMigrator{seen: map[int]int{}, onRun: func(pid, n int, local []int) {
		switch {
		case pid == 1002:
			b.tree.set("", "pods/b", "memory.numa_stat", "anon N0=33554432 N1=33554432")
		case pid == 1004 && n == 2:
			home.onRun(pid, n, local)
		}
	}}
	b.a.loc = newLocalityRunner(b.a, m)
	b.settle()
	b.window(10*time.Second, busyAll, memAll0)
	for range 10 {
		b.settle()
	}
	want := map[string]string{"pods/a": "0", "pods/b": "0-1", "pods/c": "0", "pods/d": "1"}
	for cg, mems := range want {
		if got := b.mems(cg); got != mems {
			t.Errorf("%s mems %q, want %q", cg, got, mems)
		}
	}
	if m.seen[1002] != 3 || m.seen[1004] != 2 || len(m.seen) != 2 {
		t.Errorf("runs per pid %v, want b 3, d 2", m.seen)
	}
	if ev := b.reasons("NUMABalancerMemoryRemote"); len(ev) != 1 || !strings.Contains(ev[0], "b: after 3 memory locality runs 32Mi (50%) of its memory is still off node1; cpuset.mems stays 0-1") {
		t.Errorf("events %q", ev)
	}
}

func TestBalancerNeverHandsOutExclusiveCPUs(t *testing.T) {
	tree := newBalTree(t)
	tree.mkcg("pods/pin")
	b := newBalHarness(t, tree, "", true)
	b.settle()
	b.window(10*time.Second, busyAll, memAll0)
	b.settle()
	// A workload takes two CPUs of its own between two decisions.
	b.writeConfig(balConfig + `- name: pin
  cgroup: pods/pin
  qosClass: LS
  resources: {limits: {cpu: "2"}}
  annotations: {cpuset-scheduler: "true"}
`)
	b.settle()
	pin, _ := cpuset.Parse(b.cpus("pods/pin"))
	if pin.Size() != 2 {
		t.Fatalf("pods/pin cpus %q", b.cpus("pods/pin"))
	}
	for _, cg := range balGroups {
		got, _ := cpuset.Parse(b.cpus(cg))
		if got.IsEmpty() || !got.Intersection(pin).IsEmpty() {
			t.Errorf("%s cpus %q: overlaps the exclusive %s or is empty", cg, got, pin)
		}
	}
}

func TestBalancerKeepsMemsWideOnV2ByDefault(t *testing.T) {
	b := newBalHarness(t, newBalTree(t), "", true)
	b.a.opts.NUMABalancer.NarrowMems = false
	b.a.bal = nil // the runner takes the options at the first reconcile
	m := homing(b)
	b.a.loc = newLocalityRunner(b.a, m)
	b.settle()
	b.window(10*time.Second, busyAll, memAll0)
	b.settle()
	b.settle()
	for _, cg := range []string{"pods/a", "pods/b", "vms/vm1"} {
		if got := b.mems(cg); got != "0-1" {
			t.Errorf("%s mems %q, want both nodes kept on cgroup v2", cg, got)
		}
	}
	if b.cpus("pods/b") != "2-3" || m.seen[1002] != 1 {
		t.Fatalf("pods/b cpus %q, runs %v: want it placed on node1 and its memory moved once", b.cpus("pods/b"), m.seen)
	}
	b.settle()
	if m.seen[1002] != 1 {
		t.Fatalf("runs %v: a settled group ran again", m.seen)
	}
}

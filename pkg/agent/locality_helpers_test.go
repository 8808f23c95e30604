package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// twoNodes is a one-socket machine split in two NUMA nodes of two CPUs each.
var twoNodes = fixture.Shape{Name: "small-2n-4c", Sockets: 1, NUMAPerSocket: 2, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 1, Siblings: fixture.SiblingsSplit, MemoryPerNode: 4 << 30}

// fakeMigrator stands in for the kernel: every call reports 1000 pages that
// were all on the first remote node, of which ratios[i] percent are local
// afterwards (the last ratio repeats). With block set, a call waits until
// its context ends.
type fakeMigrator struct {
	mu      sync.Mutex
	calls   []locality.Request
	opts    []locality.Options
	ratios  []int
	block   bool
	started chan struct{}
}

func (f *fakeMigrator) Migrate(ctx context.Context, req locality.Request, opts locality.Options) (locality.Result, error) {
	f.mu.Lock()
	f.calls, f.opts = append(f.calls, req), append(f.opts, opts)
	ratio := 100
	if n := len(f.ratios); n > 0 {
		ratio = f.ratios[min(len(f.calls), n)-1]
	}
	f.mu.Unlock()
	if f.block {
		f.started <- struct{}{}
		<-ctx.Done()
		return locality.Result{}, ctx.Err()
	}
	remote := -1
	for _, n := range req.Nodes {
		if !slices.Contains(req.Local, n) {
			remote = n
			break
		}
	}
	to := req.Local[0]
	local := uint64(10 * ratio)
	return locality.Result{Local: req.Local, Before: locality.NodePages{remote: 1000},
		After: locality.NodePages{to: local, remote: 1000 - local}, Moved: local, RemoteLeft: 1000 - local,
		LongestStall: 3 * time.Millisecond,
		Processes:    []locality.ProcessResult{{PID: req.PIDs[0], Moved: []locality.Move{{From: remote, To: to, Pages: local}}}}}, nil
}

func (f *fakeMigrator) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// fakeClock is the agent's clock, moved by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

var locT0 = time.Date(2024, 2, 27, 10, 0, 0, 0, time.UTC)

// locHarness is an agent on a v2 fixture tree of the given machine, with
// pid 4242 in pods/redis and the migrator replaced by f.
func locHarness(t *testing.T, shape fixture.Shape, cfg string, f *fakeMigrator, clk *fakeClock, mod func(*Options)) *harness {
	t.Helper()
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch", "pods/other")
	tree.set("", "pods/redis", "cgroup.procs", "4242")
	tree.set("", "pods/other", "cgroup.procs", "4343")
	return locAgent(t, tree, shape, cfg, "", f, clk, mod)
}

// locAgent starts an agent on tree; stateDir "" makes a fresh one.
func locAgent(t *testing.T, tree *cgroupTree, shape fixture.Shape, cfg, stateDir string, f *fakeMigrator, clk *fakeClock,
	mod func(*Options)) *harness {
	t.Helper()
	h := newHarness(t, tree, cfg, func(o *Options) {
		o.SysfsRoot = sysfs(t, shape)
		if stateDir != "" {
			o.StateDir = stateDir
		}
		if mod != nil {
			mod(o)
		}
	})
	h.a.loc = newLocalityRunner(h.a, f)
	h.a.now = clk.now
	return h
}

// settle reconciles and waits for the migrations it started.
func (h *harness) settle() {
	h.t.Helper()
	h.reconcile()
	h.a.loc.Wait()
}

func (h *harness) localityEvents() []eventlog.Event {
	var out []eventlog.Event
	for _, e := range h.events() {
		if strings.HasPrefix(e.Reason, "MemoryLocality") || e.Reason == "InvalidMemoryLocality" {
			out = append(out, e)
		}
	}
	return out
}

// metricValue reads a gauge or counter (or a histogram's count) of the
// agent's registry with the given labels.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) (float64, bool) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func workloadStatus(t *testing.T, h *harness, name string) status.WorkloadStatus {
	t.Helper()
	st, err := status.Read(h.opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range st.Workloads {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no workload %s in status", name)
	return status.WorkloadStatus{}
}

// locConfig is redis bound to cpus CPUs with a memoryLocality annotation
// (none when ann is ""), plus extra workloads and HostConfig lines.
func locConfig(cpus, ann, top, extra string) string {
	a := ""
	if ann != "" {
		a = fmt.Sprintf("\n    koordinator.sh/memoryLocality: '%s'", ann)
	}
	return head + top + fmt.Sprintf(`workloads:
- name: redis
  cgroup: pods/redis
  qosClass: LS
  resources: {limits: {cpu: "%s"}}
  annotations:
    cpuset-scheduler: "true"%s
`, cpus, a) + extra
}

// wantMessage is the seed's message for one container moved fully local.
func wantMessage(t *testing.T, h *harness, ratio int) string {
	t.Helper()
	ck := h.checkpoint()
	local := h.a.topo.NodesOf(ck.Assignments["redis"].CPUs)
	if len(local) != 1 {
		t.Fatalf("redis CPUs %s span nodes %v, want one", ck.Assignments["redis"].CPUs, local)
	}
	// One container: the seed's one-line MemoryLocalitySuccess form.
	return fmt.Sprintf("migrated memory from remote numa: %d to local numa: %d, cur local memory ratio %d, rest remote memory pages %d",
		1-local[0], local[0], ratio, 10*(100-ratio))
}

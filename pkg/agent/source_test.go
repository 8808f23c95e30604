package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// fakeSource is a WorkloadSource with pods given by the test.
type fakeSource struct {
	mu      sync.Mutex
	snap    source.Snapshot
	decided []source.Outcome
	events  []eventlog.Event
}

func (f *fakeSource) Name() string             { return "fake" }
func (f *fakeSource) Changed() <-chan struct{} { return nil }
func (f *fakeSource) Snapshot(source.Env) source.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap
}
func (f *fakeSource) Reconciled(d source.Outcome) { f.decided = append(f.decided, d) }
func (f *fakeSource) emit(e eventlog.Event) {
	f.mu.Lock()
	f.events = append(f.events, e)
	f.mu.Unlock()
}

// pod is a workload laid out like a pod: a pod cgroup with one container
// cgroup below it.
func pod(name string, cpus int) source.Workload {
	cg := "kubepods/pod-" + name
	return source.Workload{Class: "LS", Plan: workload.Workload{Name: "ns/" + name, Cgroup: cg,
		Containers: []workload.Container{{Name: "app", Cgroup: cg + "/app"}},
		CPU:        workload.CPUNeed{Exclusive: cpus > 0, CPUs: cpus, Policy: cpualloc.FullPCPUs},
		MemQoS: memqos.Workload{Namespace: "ns", Class: memqos.ClassLS, ClassFrom: "label " + workload.LabelQoSClass,
			Containers: []memqos.Container{{Name: "app", RequestBytes: 1 << 30, LimitBytes: 2 << 30}}}}}
}

// newSourceAgent is an agent on the Small4 fixture and tree, its
// workloads from src and its Events to events, closed with the test.
func newSourceAgent(t *testing.T, tree *cgroupTree, src source.Source, events *fakeSource) *Agent {
	t.Helper()
	a, err := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), SysfsRoot: sysfs(t, fixture.Small4),
		CgroupRoot: tree.root, CgroupVersion: tree.v, Source: src, EventSink: events.emit,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// lsLow50 is the SLO configuration of the pods' tests: memory QoS on for LS
// with lowLimitPercent 50, decoded as a source hands it over.
func lsLow50(t testing.TB) sloconfig.Doc {
	t.Helper()
	rq, err := sloconfig.ParseResourceQoS(memQoSOn)
	if err != nil {
		t.Fatal(err)
	}
	return sloconfig.Doc{ResourceQoS: rq}
}

// With a source, the loop writes the containers' cgroups (not only the
// pod's), names the container in its events, hands them and the decision
// to the source, and forgets a removed pod's originals once its cgroups
// are gone.
func TestSourceWorkloads(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			tree := newCgroupTree(t, v, true, "0-3") // with the memory files on v1 too
			tree.mkcg("kubepods/pod-a/app", "kubepods/pod-b/app")
			src := &fakeSource{snap: source.Snapshot{Reserved: cpuset.New(0),
				SLO: lsLow50(t), Workloads: []source.Workload{pod("a", 2), pod("b", 0)}}}
			a := newSourceAgent(t, tree, src, src)
			if res := a.Reconcile(); len(res.Errors) > 0 || len(res.Problems) > 0 {
				t.Fatalf("errors %v problems %v", res.Errors, res.Problems)
			}
			if got := tree.file("kubepods/pod-a/app", "memory.low"); got != "536870912" {
				t.Errorf("container memory.low = %q, want 536870912", got)
			}
			excl := tree.file("kubepods/pod-a/app", "cpuset.cpus")
			if c, err := cpuset.Parse(excl); err != nil || c.Size() != 2 || c.Contains(0) {
				t.Errorf("container a cpuset.cpus = %q, want 2 CPUs but 0", excl)
			}
			if len(src.decided) != 1 || src.decided[0].Assignments["ns/a"].CPUs.String() != excl {
				t.Errorf("decisions handed to the source: %+v", src.decided)
			}
			found := false
			for _, e := range src.events {
				found = found || e.Reason == "CgroupUpdated" && e.Workload == "ns/a" && strings.Contains(e.Message, "app:memory.low=536870912")
			}
			if !found {
				t.Errorf("no CgroupUpdated event naming the container: %+v", src.events)
			}
			if st := a.pub.Current(); st.Config != "fake" || len(st.Workloads) != 2 || st.Workloads[0].Source != FromPod {
				t.Errorf("status %+v", st)
			}

			// Pod b's cgroups go, then b leaves the source: nothing of it is left.
			for _, c := range tree.controllers() {
				if err := os.RemoveAll(tree.dir(c, "kubepods/pod-b")); err != nil {
					t.Fatal(err)
				}
			}
			src.mu.Lock()
			src.snap.Workloads = src.snap.Workloads[:1]
			src.mu.Unlock()
			if res := a.Reconcile(); len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			for _, key := range a.originals.(interface{ Keys() []string }).Keys() {
				if strings.Contains(key, "pod-b") {
					t.Errorf("original %s of a removed pod kept", key)
				}
			}
		})
	}
}

// An agent on a source stopped while starting (its context ended before
// the first reconcile, as a SIGTERM right after exec) shuts down cleanly:
// it has no config yet, and nothing to stop. It dereferenced that missing
// config before.
func TestSourceAgentStoppedWhileStarting(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, true, "0-3")
	src := &fakeSource{snap: source.Snapshot{Reserved: cpuset.New(0), SLO: lsLow50(t)}}
	a := newSourceAgent(t, tree, src, src)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatalf("Run stopped while starting: %v", err)
	}
}

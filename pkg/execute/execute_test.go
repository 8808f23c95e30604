package execute

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/coresched"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// events records what an Executor tells.
type events []string

func (e *events) Emit(typ, reason, workload, format string, args ...any) {
	*e = append(*e, reason+" "+workload+": "+fmt.Sprintf(format, args...))
}

// newExecutor builds an Executor on a cgroup v2 tree of plain files with
// cgroup pods/redis, whose cpuset.cpus Locus changed from 0-7 to 2-3.
func newExecutor(t testing.TB, dryRun bool) (*Executor, *events, *bytes.Buffer, string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory"}
	writeTree(t, root, map[string]map[string]string{"": files, "pods": files, "pods/redis": {"cgroup.procs": "", "cpuset.cpus": "2-3"}})
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	orig := cgroup.NewMemoryStore()
	if err := orig.RecordOriginals(map[string]string{"pods/redis/cpuset.cpus": "0-7"}); err != nil {
		t.Fatal(err)
	}
	ev, out := &events{}, &bytes.Buffer{}
	c := testConfig(t, h, orig, ev)
	if err := c.Store.Update(func(c *state.Checkpoint) error {
		c.Workloads["redis"] = state.Workload{Cgroup: "pods/redis"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.Store.(*state.Store).ReadOnly = dryRun
	c.DryRun, c.Out = dryRun, out
	e := mustNew(t, c)
	return e, ev, out, root
}

// testConfig is an Executor's configuration on h and orig: its checkpoint
// in a directory of its own, Events to ev, no core scheduling.
func testConfig(t testing.TB, h *cgroup.Hierarchy, orig cgroup.OriginalStore, ev *events) Config {
	t.Helper()
	store, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return Config{Hierarchy: h, Originals: orig, OriginalsFile: "originals.json", Store: store,
		Procs: procfs.New(t.TempDir()), Events: ev, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Writes:      prometheus.NewCounter(prometheus.CounterOpts{Name: "writes"}),
		Unsupported: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "unsupported"}, []string{"knob"}),
		Core:        unavailableCore{}}
}

// mustNew is New, which fails only on a missing hierarchy or store.
func mustNew(t testing.TB, c Config) *Executor {
	t.Helper()
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type unavailableCore struct{ CoreScheduler }

func (unavailableCore) Probe() coresched.Support { return coresched.Support{Reason: "absent"} }

// TestRemoveRestoresAndForgetsTheWorkload: the removal of a workload writes
// back the originals of its cgroup and drops it from the checkpoint.
func TestRemoveRestoresAndForgetsTheWorkload(t *testing.T) {
	e, ev, _, root := newExecutor(t, false)
	rep, err := e.Remove("redis", state.Workload{Cgroup: "pods/redis"}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "pods/redis/cpuset.cpus")); string(got) != "0-7" {
		t.Errorf("cpuset.cpus = %q after removal, want its original 0-7", got)
	}
	if rep.Writes != 1 || len(rep.Errors) != 0 {
		t.Errorf("report %+v, want one write and no error", rep)
	}
	ck, err := e.c.Store.Load()
	if err != nil || len(ck.Workloads) != 0 {
		t.Errorf("checkpoint after removal: %+v, %v", ck, err)
	}
	want := []string{"CgroupUpdated redis: cpuset.cpus=0-7", "WorkloadRemoved redis: no longer managed; cgroup pods/redis restored"}
	if strings.Join(*ev, "\n") != strings.Join(want, "\n") {
		t.Errorf("events %q, want %q", *ev, want)
	}
}

// TestDryRunRemoveChangesNothing: under the dry-run switch a removal prints
// what it would do and leaves the files and the checkpoint alone.
func TestDryRunRemoveChangesNothing(t *testing.T) {
	e, ev, out, root := newExecutor(t, true)
	rep, err := e.Remove("redis", state.Workload{Cgroup: "pods/redis"}, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "pods/redis/cpuset.cpus")); string(got) != "2-3" {
		t.Errorf("cpuset.cpus = %q after a dry run, want it unchanged", got)
	}
	if rep.Writes != 0 || len(rep.Planned) != 1 || len(*ev) != 0 {
		t.Errorf("report %+v, events %q: want one planned write and no event", rep, *ev)
	}
	for _, want := range []string{"write " + filepath.Join(root, "pods/redis/cpuset.cpus") + " = 0-7", "remove cgroup pods/redis (if Locus created it)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out.String())
		}
	}
	if ck, _ := e.c.Store.Load(); len(ck.Workloads) != 1 {
		t.Errorf("the dry run changed the checkpoint: %+v", ck)
	}
}

// TestUpstreamWhy: a file upstream v1 lacks and v2 has is said to be so.
func TestUpstreamWhy(t *testing.T) {
	if got := upstreamWhy(cgroup.V1, cgroup.MemoryLow, "absent"); !strings.Contains(got, "upstream cgroup v1 has no memory.low file") {
		t.Errorf("v1 memory.low: %q", got)
	}
	if got := upstreamWhy(cgroup.V2, cgroup.MemoryLow, "absent"); got != "absent" {
		t.Errorf("v2 memory.low: %q", got)
	}
}

// TargetsOf gives a pod's container cgroups to the pod and names them, and
// a workload whose one container is its own cgroup only its cgroup.
func TestTargetsOf(t *testing.T) {
	got := TargetsOf([]workload.Workload{
		{Name: "web", Cgroup: "kubepods/pod1", Containers: []workload.Container{
			{Name: "app", Cgroup: "kubepods/pod1/c1"}, {Name: "side", Cgroup: "kubepods/pod1/c2"}}},
		{Name: "redis", Cgroup: "locus.slice/redis", Containers: []workload.Container{{Name: "redis", Cgroup: "locus.slice/redis"}}},
	})
	want := Targets{
		Owner: map[string]string{"kubepods/pod1": "web", "kubepods/pod1/c1": "web", "kubepods/pod1/c2": "web",
			"locus.slice/redis": "redis"},
		Cgroups:    map[string][]string{"web": {"kubepods/pod1", "kubepods/pod1/c1", "kubepods/pod1/c2"}, "redis": {"locus.slice/redis"}},
		Containers: map[string]string{"kubepods/pod1/c1": "app", "kubepods/pod1/c2": "side"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TargetsOf = %+v, want %+v", got, want)
	}
}

// A ReadBack on a hierarchy answers with what it knows a file holds, or
// that it is absent, and reads the files it does not know.
func TestReadBackOn(t *testing.T) {
	e, _, _, _ := newExecutor(t, false)
	r := ReadBack{"pods/redis": {cgroup.CPUSetCPUs: {Text: "4-5", Present: true}, cgroup.MemoryLow: {}}}.On(e.c.Hierarchy)
	if v, err := r.ReadKnob("pods/redis", cgroup.CPUSetCPUs); err != nil || v != "4-5" {
		t.Errorf("known cpuset.cpus = %q, %v; want 4-5", v, err)
	}
	if _, err := r.ReadKnob("pods/redis", cgroup.MemoryLow); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("known absent memory.low: %v, want not exist", err)
	}
	if v, err := ReadBack(nil).On(e.c.Hierarchy).ReadKnob("pods/redis", cgroup.CPUSetCPUs); err != nil || strings.TrimSpace(v) != "2-3" {
		t.Errorf("unknown cpuset.cpus = %q, %v; want 2-3 from the file", v, err)
	}
	if !r.Exists("pods/redis") || r.Exists("pods/gone") || r.Version() != cgroup.V2 {
		t.Errorf("Exists or Version do not read the hierarchy")
	}
}

// writeTree makes, under root, each directory of dirs (by its path from
// root) with its files and their text: a cgroup tree of plain files.
func writeTree(t testing.TB, root string, dirs map[string]map[string]string) {
	t.Helper()
	for dir, files := range dirs {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(root, dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A container the pod's status does not list yet is named in events by its
// short ID, whatever the cgroup driver calls its directory; a workload's own
// cgroup is not named.
func TestTargetsNameUnlisted(t *testing.T) {
	const id = "1f35ea39dba8b854ec93fde801767442892b09834ebd580797692e9a766f8c2e"
	ws := []workload.Workload{{Name: "ns/a", Cgroup: "kubepods/poda", Containers: []workload.Container{{Name: "w", Cgroup: "kubepods/poda/c1"}},
		Unlisted: []string{"kubepods/poda/" + id, "kubepods.slice/kubepods-poda.slice/cri-containerd-" + id + ".scope", "kubepods/poda/short"}}}
	tg := TargetsOf(ws)
	e := &Executor{containers: tg.Containers}
	for cg, want := range map[string]string{
		"kubepods/poda/c1": "w:", "kubepods/poda": "",
		"kubepods/poda/" + id: "new 1f35ea39dba8:", "kubepods.slice/kubepods-poda.slice/cri-containerd-" + id + ".scope": "new 1f35ea39dba8:",
		"kubepods/poda/short": "new short:",
	} {
		if got := e.containerPrefix(cg); got != want {
			t.Errorf("%s named %q, want %q", cg, got, want)
		}
	}
}

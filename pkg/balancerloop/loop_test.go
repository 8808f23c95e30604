package balancerloop

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/topology"
	topofixture "github.com/locus-project/locus/pkg/topology/fixture"
)

// The runner's behaviour within a whole agent (placing, migrating,
// narrowing, overflow, restart, disable) is tested in pkg/agent; these are
// its parts that need no agent.

type fakeOriginals struct{ forgot []string }

func (o *fakeOriginals) Forget(keys ...string) error {
	o.forgot = append(o.forgot, keys...)
	return nil
}

type fakeEvents struct{ got []string }

func (e *fakeEvents) Emit(typ, reason, workload, format string, args ...any) {
	e.got = append(e.got, typ+" "+reason+" "+workload+": "+fmt.Sprintf(format, args...))
}

type fixture struct {
	d   Deps
	o   *fakeOriginals
	ev  *fakeEvents
	dir string
}

// newFixture is a cgroup v2 root holding vms/vm1 (not vms/vm2) and a state
// directory.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "vms", "vm1"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{o: &fakeOriginals{}, ev: &fakeEvents{}, dir: t.TempDir()}
	f.d = Deps{H: h, Originals: f.o, Events: f.ev, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: time.Now, Wake: func(time.Duration) {}, StateDir: f.dir,
		Load: func(file, _ string, v any) bool {
			raw, err := os.ReadFile(filepath.Join(f.dir, file))
			return err == nil && json.Unmarshal(raw, v) == nil
		}}
	return f
}

// writeRecord leaves what an earlier run with the balancer on kept: three
// groups placed, two of them cgroups outside the workloads.
func (f *fixture) writeRecord(t *testing.T) {
	t.Helper()
	rec := record{State: balancer.State{Groups: map[string]balancer.GroupState{
		"a": {Partitions: []string{"node0"}}, "vms/vm1": {Partitions: []string{"node1"}}, "vms/vm2": {Partitions: []string{"node0"}}}},
		Extra: []string{"vms/vm1", "vms/vm2"}}
	raw, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(f.dir, File), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// noneFailed is AfterWrite's failed when every write was made.
func noneFailed(string) bool { return false }

func TestOffReleasesWhatAnEarlierRunWrote(t *testing.T) {
	f := newFixture(t)
	f.writeRecord(t)
	r := NewOff(f.d, false, false)
	if !r.Off() {
		t.Fatal("an off runner is on")
	}
	// vm1 is released: the decision restores its cpuset. vms/vm2 is gone:
	// its originals are forgotten, not restored.
	b := r.Observe(Input{})
	if !slices.Equal(b.Released, []string{"vms/vm1"}) || len(b.Workloads)+len(b.Cgroups) != 0 {
		t.Fatalf("observed %+v: want vm1 released and nothing placed", b)
	}
	if len(f.o.forgot) != 2 || !slices.ContainsFunc(f.o.forgot, func(k string) bool { return strings.HasSuffix(k, "vms/vm2/cpuset.cpus") }) {
		t.Fatalf("forgot %q", f.o.forgot)
	}
	if len(f.ev.got) != 0 {
		t.Fatalf("told %q before the decision was written", f.ev.got)
	}
	if got := r.AfterWrite(decide.Desired{Released: b.Released}, noneFailed); got != nil {
		t.Fatalf("an off runner names locality runs: %+v", got)
	}
	wantEv := []string{
		"Normal NUMABalancerReleased vms/vm1: no longer balanced: cpuset.cpus and cpuset.mems restored",
		"Normal NUMABalancerDisabled : the NUMA balancer is off: 1 group(s) keep the pools' cpusets again, 2 other cgroup(s) restored",
	}
	if !slices.Equal(f.ev.got, wantEv) {
		t.Fatalf("events %q, want %q", f.ev.got, wantEv)
	}
	if _, err := os.Stat(filepath.Join(f.dir, File)); !os.IsNotExist(err) {
		t.Fatalf("the record is still there: %v", err)
	}
	if b := r.Observe(Input{}); len(b.Released) != 0 {
		t.Fatalf("released again: %+v", b)
	}
}

// A restore that failed (or found its cgroup gone) is not told as done.
func TestOffTellsOnlyWhatWasRestored(t *testing.T) {
	f := newFixture(t)
	f.writeRecord(t)
	r := NewOff(f.d, false, false)
	r.Observe(Input{})
	r.AfterWrite(decide.Desired{}, func(name string) bool { return name == "vms/vm1" })
	if len(f.ev.got) != 1 || !strings.Contains(f.ev.got[0], "NUMABalancerDisabled") {
		t.Fatalf("events %q, want only NUMABalancerDisabled", f.ev.got)
	}
}

func TestOffReleasesNothingWhenAskedForOrDry(t *testing.T) {
	for _, c := range []struct{ asked, dry bool }{{true, false}, {false, true}, {true, true}} {
		f := newFixture(t)
		f.writeRecord(t)
		r := NewOff(f.d, c.asked, c.dry)
		b := r.Observe(Input{})
		r.AfterWrite(decide.Desired{}, noneFailed)
		if len(b.Released)+len(f.o.forgot)+len(f.ev.got) != 0 {
			t.Errorf("asked %v dry %v: released %v, forgot %v, events %q", c.asked, c.dry, b.Released, f.o.forgot, f.ev.got)
		}
		if _, err := os.Stat(filepath.Join(f.dir, File)); err != nil {
			t.Errorf("asked %v dry %v: the record went: %v", c.asked, c.dry, err)
		}
	}
}

// The cgroups that are no workload's reach the decision from the record
// at a restart, placed where they were; one placed is recorded before the
// decision writes it, and one recorded whose cgroup is gone is forgotten.
func TestObserveAfterARestart(t *testing.T) {
	f := newFixture(t)
	rec := record{State: balancer.State{Groups: map[string]balancer.GroupState{
		"vms/vm1": {Partitions: []string{"node1"}}, "vms/vm2": {Partitions: []string{"node0"}}}},
		Extra: []string{"vms/vm2"}}
	raw, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(f.dir, File), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	f.d.Metrics, f.d.ProcRoot = prometheus.NewRegistry(), t.TempDir()
	r := New(Options{Cgroups: []string{"vms"}}, f.d)
	topo := topofixture.MustBuild(topofixture.Intel2S96C)
	b := r.Observe(Input{Topology: topo})
	node1 := topo.CPUsWhere(func(c topology.CPU) bool { return c.NUMA == 1 })
	p, ok := b.Cgroups["vms/vm1"]
	if !ok || !p.CPUs.Equals(node1) || !slices.Equal(p.Nodes, []int{1}) || p.Home || len(b.Workloads) != 0 || len(b.Released) != 0 {
		t.Fatalf("observed %+v: want vms/vm1 on node 1", b)
	}
	var saved record
	if raw, err := os.ReadFile(filepath.Join(f.dir, File)); err != nil || json.Unmarshal(raw, &saved) != nil || !slices.Equal(saved.Extra, []string{"vms/vm1"}) {
		t.Fatalf("record %+v (%v): want vms/vm1 recorded before it is written, vms/vm2 dropped", saved, err)
	}
	if len(f.o.forgot) != 2 || !strings.HasSuffix(f.o.forgot[0], "vms/vm2/cpuset.cpus") {
		t.Fatalf("forgot %q: want vms/vm2's originals", f.o.forgot)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	def := balancer.DefaultConfig()
	if o.Interval != 10*time.Second || o.Partition != balancer.ByNUMA || o.Config != def {
		t.Fatalf("defaults %+v, want 10s, numa and %+v", o, def)
	}
	o = Options{Interval: time.Second, NoOverflow: true, Config: balancer.Config{MaxMoves: 4, Smoothing: 2}}.withDefaults()
	if o.Interval != time.Second || o.Config.MaxMoves != 4 || o.Config.Smoothing != def.Smoothing || o.Config.Overflow {
		t.Fatalf("options kept or defaulted wrongly: %+v", o)
	}
}

func TestAddFlags(t *testing.T) {
	var o Options
	f := pflag.NewFlagSet("locus", pflag.ContinueOnError)
	AddFlags(f, &o)
	if err := f.Parse([]string{"--numa-balancer", "--numa-balancer-partition=l3", "--numa-balancer-cgroups=machine.slice"}); err != nil {
		t.Fatal(err)
	}
	if !o.Enabled || o.Partition != balancer.ByL3 || !slices.Equal(o.Cgroups, []string{"machine.slice"}) || o.Interval != 10*time.Second {
		t.Fatalf("parsed %+v", o)
	}
	if err := f.Parse([]string{"--numa-balancer-partition=socket"}); err == nil {
		t.Fatal("a wrong partition kind was taken")
	}
}

// Without a record there is nothing to release, and nothing to tell or
// log.
func TestOffWithoutARecord(t *testing.T) {
	f := newFixture(t)
	var log strings.Builder
	f.d.Log = slog.New(slog.NewTextHandler(&log, nil))
	r := NewOff(f.d, false, false)
	if b := r.Observe(Input{}); len(b.Released) != 0 {
		t.Fatalf("released %+v", b)
	}
	r.AfterWrite(decide.Desired{}, noneFailed)
	if len(f.ev.got) != 0 || log.Len() != 0 {
		t.Fatalf("events %q, log %q", f.ev.got, log.String())
	}
}

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

	"github.com/spf13/pflag"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/cgroup"
)

// The runner's behaviour within a whole agent (placing, migrating,
// narrowing, overflow, restart, disable) is tested in pkg/agent; these are
// its parts that need no agent.

type fakeWriter struct {
	applied  [][]cgroup.Op
	restored [][]cgroup.Target
}

func (w *fakeWriter) Apply(ops []cgroup.Op) (cgroup.Report, error) {
	w.applied = append(w.applied, ops)
	return cgroup.Report{}, nil
}

func (w *fakeWriter) Restore(targets []cgroup.Target) (cgroup.Report, error) {
	w.restored = append(w.restored, targets)
	return cgroup.Report{}, nil
}

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
	w   *fakeWriter
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
	f := &fixture{w: &fakeWriter{}, o: &fakeOriginals{}, ev: &fakeEvents{}, dir: t.TempDir()}
	f.d = Deps{H: h, Writer: f.w, Originals: f.o, Events: f.ev, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
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

func TestOffRestoresWhatAnEarlierRunWrote(t *testing.T) {
	f := newFixture(t)
	f.writeRecord(t)
	r := NewOff(f.d, false, false)
	if !r.Off() || r.AfterWrite() != nil {
		t.Fatal("an off runner is on or names locality runs")
	}
	want := [][]cgroup.Target{{{Cgroup: "vms/vm1", Knob: cgroup.CPUSetCPUs}, {Cgroup: "vms/vm1", Knob: cgroup.CPUSetMems}}}
	if fmt.Sprint(f.w.restored) != fmt.Sprint(want) || len(f.w.applied) != 0 {
		t.Fatalf("restored %v, applied %v: want vm1's cpuset restored and nothing written", f.w.restored, f.w.applied)
	}
	// vms/vm2 is gone: its originals are forgotten, not restored.
	if len(f.o.forgot) != 2 || !slices.ContainsFunc(f.o.forgot, func(k string) bool { return strings.HasSuffix(k, "vms/vm2/cpuset.cpus") }) {
		t.Fatalf("forgot %q", f.o.forgot)
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
}

func TestOffRestoresNothingWhenAskedForOrDry(t *testing.T) {
	for _, c := range []struct{ asked, dry bool }{{true, false}, {false, true}, {true, true}} {
		f := newFixture(t)
		f.writeRecord(t)
		NewOff(f.d, c.asked, c.dry)
		if len(f.w.restored)+len(f.o.forgot)+len(f.ev.got) != 0 {
			t.Errorf("asked %v dry %v: restored %v, forgot %v, events %q", c.asked, c.dry, f.w.restored, f.o.forgot, f.ev.got)
		}
		if _, err := os.Stat(filepath.Join(f.dir, File)); err != nil {
			t.Errorf("asked %v dry %v: the record went: %v", c.asked, c.dry, err)
		}
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

func TestWiden(t *testing.T) {
	for _, c := range []struct {
		mems  string
		nodes []int
		want  string
	}{{"0", []int{1}, "0-1"}, {"", []int{1}, "1"}, {"0-1", []int{0}, "0-1"}, {"bad", []int{0}, "0"}} {
		if got := widen(c.mems, c.nodes); got != c.want {
			t.Errorf("widen(%q, %v) = %q, want %q", c.mems, c.nodes, got, c.want)
		}
	}
}

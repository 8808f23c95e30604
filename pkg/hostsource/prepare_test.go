package hostsource

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/supervisor"
)

type fakeCgroups struct{ created []string }

func (f *fakeCgroups) Root() string                { return "/cg" }
func (f *fakeCgroups) Procs(string) ([]int, error) { return nil, nil }
func (f *fakeCgroups) Children(cgroup.Controller, string) ([]string, error) {
	return nil, nil
}
func (f *fakeCgroups) EnsureCgroup(rel string) ([]string, error) {
	f.created = append(f.created, rel)
	return []string{rel}, nil
}
func (f *fakeCgroups) AddProcs(string, []int) (cgroup.ProcsReport, error) {
	return cgroup.ProcsReport{}, nil
}

type fakeSup struct {
	started []string
	wait    time.Duration
}

func (f *fakeSup) Find(string) []supervisor.Owned                   { return nil }
func (f *fakeSup) Ours(int) bool                                    { return false }
func (f *fakeSup) SpecOf(int) (string, bool)                        { return "", false }
func (f *fakeSup) Exited(string, time.Time) (time.Duration, string) { return 0, "" }
func (f *fakeSup) Adopted(string, time.Time)                        {}
func (f *fakeSup) WaitFor(string, time.Time) time.Duration          { return f.wait }
func (f *fakeSup) Stop(state.Process) error                         { return nil }
func (f *fakeSup) Start(name, rel string, argv []string) (state.Process, error) {
	f.started = append(f.started, name+" in "+rel)
	return state.Process{PID: 4242}, nil
}

type fakeEvents []string

func (f *fakeEvents) Emit(typ, reason, workload, format string, args ...any) {
	*f = append(*f, reason+" "+workload+": "+fmt.Sprintf(format, args...))
}

type preparerFixture struct {
	cg     fakeCgroups
	sup    fakeSup
	events fakeEvents
	saved  map[string]state.Workload
	woken  []time.Duration
	out    bytes.Buffer
	exists map[string]bool
}

func (f *preparerFixture) preparer(dryRun, once bool) *Preparer {
	f.saved = map[string]state.Workload{}
	return NewPreparer(Options{Procs: procfs.New(""), Cgroups: &f.cg, Writer: &f.cg,
		Exists: func(rel string) bool { return f.exists[rel] }, Sup: &f.sup,
		Save:   func(name string, e state.Workload) { f.saved[name] = e },
		Events: &f.events, Wake: func(d time.Duration) { f.woken = append(f.woken, d) },
		DryRun: dryRun, Once: once, Out: &f.out})
}

var (
	cgroupSpec  = hostconfig.Workload{Name: "db", Cgroup: "system.slice/db.service"}
	commandSpec = hostconfig.Workload{Name: "job", Command: []string{"sleep", "600"}}
)

func TestPrepareCgroupWorkload(t *testing.T) {
	var f preparerFixture
	p := f.preparer(false, false)
	ready, probs := p.Prepare(cgroupSpec, "system.slice/db.service", &state.Workload{})
	if ready || len(probs) != 1 || probs[0].Reason != "CgroupNotFound" ||
		probs[0].Message != "cgroup system.slice/db.service does not exist under /cg; nothing written" {
		t.Fatalf("missing cgroup: %v %+v", ready, probs)
	}
	f.exists = map[string]bool{"system.slice/db.service": true}
	if ready, probs := p.Prepare(cgroupSpec, "system.slice/db.service", &state.Workload{}); !ready || len(probs) != 0 || len(f.cg.created) != 0 {
		t.Fatalf("existing cgroup: %v %+v, created %v", ready, probs, f.cg.created)
	}
}

func TestPrepareCommand(t *testing.T) {
	var f preparerFixture
	if ready, probs := f.preparer(false, true).Prepare(commandSpec, "locus.slice/job", &state.Workload{}); ready || len(probs) != 1 || probs[0].Reason != "NotStarted" {
		t.Fatalf("--once: %v %+v", ready, probs)
	}
	if ready, _ := f.preparer(true, false).Prepare(commandSpec, "locus.slice/job", &state.Workload{}); ready ||
		f.out.String() != "create cgroup locus.slice/job\nstart job: sleep 600\n" || len(f.cg.created)+len(f.sup.started) != 0 {
		t.Fatalf("--dry-run: ready %v, printed %q, created %v, started %v", ready, f.out.String(), f.cg.created, f.sup.started)
	}

	p := f.preparer(false, false)
	entry := state.Workload{Cgroup: "locus.slice/job"}
	ready, probs := p.Prepare(commandSpec, "locus.slice/job", &entry)
	if !ready || len(probs) != 0 || entry.Started == nil || entry.Started.PID != 4242 || !entry.Created {
		t.Fatalf("start: %v %+v, entry %+v", ready, probs, entry)
	}
	if got := f.saved["job"]; got.Started == nil || !got.Created {
		t.Errorf("saved entry %+v", got)
	}
	if len(f.events) != 1 || f.events[0] != "WorkloadStarted job: started process 4242: sleep 600" {
		t.Errorf("events %q", f.events)
	}

	f.sup.wait = time.Minute
	ready, probs = p.Prepare(commandSpec, "locus.slice/job", &state.Workload{Cgroup: "locus.slice/job"})
	if !ready || len(probs) != 1 || probs[0].Reason != "BackOff" || len(f.woken) != 1 || f.woken[0] != time.Minute {
		t.Fatalf("backoff: %v %+v, woken %v", ready, probs, f.woken)
	}
	if len(f.sup.started) != 1 || !strings.HasPrefix(f.sup.started[0], "job in locus.slice/job") {
		t.Errorf("started %v", f.sup.started)
	}
}

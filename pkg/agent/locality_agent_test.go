package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

func TestLocalityOneShotRunsOnceAndSurvivesRestart(t *testing.T) {
	f, clk := &fakeMigrator{}, &fakeClock{t: locT0}
	cfg := locConfig("2", `{"policy": "bestEffort"}`, "", "")
	h := locHarness(t, twoNodes, cfg, f, clk, func(o *Options) { o.LocalityBudget = 7 * time.Millisecond })
	for range 3 {
		h.settle()
		clk.t = clk.t.Add(24 * time.Hour)
	}
	if f.count() != 1 {
		t.Fatalf("one-shot migrated %d times, want 1", f.count())
	}
	req, opts := f.calls[0], f.opts[0]
	ck := h.checkpoint()
	if !slices.Equal(req.PIDs, []int{4242}) || !slices.Equal(req.Local, h.a.topo.NodesOf(ck.Assignments["redis"].CPUs)) ||
		!slices.Equal(req.Nodes, []int{0, 1}) || req.Policy != sloconfig.LocalityBestEffort {
		t.Errorf("request %+v", req)
	}
	if opts.Budget != 7*time.Millisecond || opts.SysfsRoot != h.opts.SysfsRoot || opts.Margin != (locality.Margin{}) {
		t.Errorf("options %+v", opts)
	}
	evs := h.localityEvents()
	if len(evs) != 1 || evs[0].Type != eventlog.Normal || evs[0].Reason != locality.EventSuccess || evs[0].Workload != "redis" ||
		evs[0].Message != wantMessage(t, h, 100) {
		t.Fatalf("events %+v\nwant one MemoryLocalitySuccess %q", evs, wantMessage(t, h, 100))
	}
	ml := workloadStatus(t, h, "redis").MemoryLocality
	if ml == nil || ml.Reason != locality.EventSuccess || ml.LocalRatio == nil || *ml.LocalRatio != 100 ||
		ml.PagesMigrated != 1000 || !ml.Time.Equal(locT0) {
		t.Errorf("status memoryLocality %+v", ml)
	}
	reg := h.a.metrics.Reg
	for _, m := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"locus_memory_local_ratio", []string{"workload", "redis"}, 1},
		{"locus_memory_pages_migrated_total", []string{"workload", "redis"}, 1000},
		{"locus_memory_migration_duration_seconds", nil, 1},
		{"locus_memory_migration_longest_stall_seconds", []string{"workload", "redis"}, 0.003},
	} {
		if got, ok := metricValue(t, reg, m.name, m.labels...); !ok || got != m.want {
			t.Errorf("%s%v = %v (present %v), want %v", m.name, m.labels, got, ok, m.want)
		}
	}

	// A restarted agent knows the migration ran; a new cpuset runs it again
	// (shrunk in place, it stays on its node: a grow here would span both).
	h.a.Close()
	f2 := &fakeMigrator{}
	h2 := locAgent(t, h.tree, twoNodes, cfg, h.opts.StateDir, f2, clk, nil)
	h2.settle()
	if f2.count() != 0 || len(h2.localityEvents()) != 1 {
		t.Fatalf("after a restart: %d migrations, events %+v", f2.count(), h2.localityEvents())
	}
	if ml := workloadStatus(t, h2, "redis").MemoryLocality; ml == nil || ml.Reason != locality.EventSuccess {
		t.Errorf("after a restart status memoryLocality = %+v, want the last run", ml)
	}
	h2.writeConfig(locConfig("1", `{"policy": "bestEffort"}`, "", ""))
	h2.settle()
	h2.settle()
	cpus := h2.checkpoint().Assignments["redis"].CPUs
	if f2.count() != 1 || cpus.Equals(ck.Assignments["redis"].CPUs) {
		t.Fatalf("new cpuset %s (was %s): %d migrations, want 1", cpus, ck.Assignments["redis"].CPUs, f2.count())
	}
	if evs := h2.localityEvents(); len(evs) != 2 || !slices.Equal(f2.calls[0].Local, h2.a.topo.NodesOf(cpus)) {
		t.Errorf("after the cpuset change: events %+v, request %+v", evs, f2.calls[0])
	}
}

func TestLocalityIntervalReportsOnlyChanges(t *testing.T) {
	// 100 → 100 → 90 (10 points: no Event) → 89 (11 points: Event) → 89.
	f, clk := &fakeMigrator{ratios: []int{100, 100, 90, 89, 89}}, &fakeClock{t: locT0}
	h := locHarness(t, twoNodes, locConfig("1", `{"policy": "bestEffort", "migrateIntervalMinutes": 10}`, "", ""), f, clk, nil)
	wantCalls := []int{1, 1, 2, 2, 3, 4, 5} // every 5 minutes: a run every other reconcile
	for i, want := range wantCalls {
		h.settle()
		if f.count() != want {
			t.Fatalf("after %v: %d migrations, want %d", clk.t.Sub(locT0), f.count(), want)
		}
		if i < 3 {
			clk.t = clk.t.Add(5 * time.Minute)
		} else {
			clk.t = clk.t.Add(10 * time.Minute)
		}
	}
	evs := h.localityEvents()
	if len(evs) != 2 || evs[0].Message != wantMessage(t, h, 100) || evs[1].Message != wantMessage(t, h, 89) {
		t.Fatalf("events %+v\nwant the first run's and the 89 %% run's", evs)
	}
	if got, _ := metricValue(t, h.a.metrics.Reg, "locus_memory_local_ratio", "workload", "redis"); got != 0.89 {
		t.Errorf("local ratio gauge %v, want the last run's 0.89 whether reported or not", got)
	}
	if got, _ := metricValue(t, h.a.metrics.Reg, "locus_memory_migration_duration_seconds"); got != 5 {
		t.Errorf("duration histogram counted %v runs, want 5", got)
	}
}

func TestLocalitySkippedWithoutTargetNUMA(t *testing.T) {
	tests := []struct {
		name  string
		shape fixture.Shape
		cpus  string
	}{
		{"one NUMA node", fixture.Small4, "1"},
		{"cpuset on every node", twoNodes, "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, clk := &fakeMigrator{}, &fakeClock{t: locT0}
			h := locHarness(t, tc.shape, locConfig(tc.cpus, `{"policy": "bestEffort"}`, "", ""), f, clk, nil)
			h.settle()
			h.settle()
			evs := h.localityEvents()
			if f.count() != 0 || len(evs) != 1 || evs[0].Type != eventlog.Normal || evs[0].Reason != locality.EventSkipped ||
				evs[0].Message != "no target numa" {
				t.Fatalf("%d migrations, events %+v; want none and one MemoryLocalitySkipped", f.count(), evs)
			}
			if ml := workloadStatus(t, h, "redis").MemoryLocality; ml == nil || ml.Reason != locality.EventSkipped {
				t.Errorf("status memoryLocality %+v", ml)
			}
		})
	}
}

func TestLocalityClassConfigAndUnboundWorkloads(t *testing.T) {
	classes := "resourceQOSConfig: {clusterStrategy: {lsClass: {memoryLocality: {policy: bestEffort}}}}\n"
	extra := `- name: shared
  cgroup: pods/other
  qosClass: LS
  annotations: {koordinator.sh/memoryLocality: '{"policy": "bestEffort"}'}
- name: batch
  cgroup: pods/batch
  qosClass: BE
  resources: {limits: {cpu: "1"}}
  annotations: {cpuset-scheduler: "true"}
`
	f, clk := &fakeMigrator{}, &fakeClock{t: locT0}
	h := locHarness(t, twoNodes, locConfig("1", "", classes, extra), f, clk, nil)
	h.settle()
	// redis follows lsClass; shared has no CPUs of its own; batch is BE and
	// beClass says nothing.
	if f.count() != 1 || !slices.Equal(f.calls[0].PIDs, []int{4242}) {
		t.Fatalf("migrations %+v, want only redis's", f.calls)
	}
	// shared asked for bestEffort: it is told why nothing moves, as the seed
	// says, rather than hearing nothing; batch did not ask.
	h.settle()
	var skipped []string
	for _, e := range h.localityEvents() {
		if e.Reason == locality.EventSkipped {
			skipped = append(skipped, e.Workload+": "+e.Message)
		}
	}
	if !slices.Equal(skipped, []string{"shared: no target numa"}) {
		t.Errorf("MemoryLocalitySkipped events %q, want one for shared", skipped)
	}
	if _, err := os.Stat(filepath.Join(h.opts.StateDir, LocalityFile)); err != nil {
		t.Fatal(err)
	}
	// Taken out of the config, redis's record and series go.
	h.writeConfig(head + classes + "workloads:\n" + extra)
	h.settle()
	raw, _ := os.ReadFile(filepath.Join(h.opts.StateDir, LocalityFile))
	if strings.Contains(string(raw), "redis") {
		t.Errorf("%s still holds redis: %s", LocalityFile, raw)
	}
	if _, ok := metricValue(t, h.a.metrics.Reg, "locus_memory_local_ratio", "workload", "redis"); ok {
		t.Error("redis's local ratio series outlived the workload")
	}
}

func TestLocalityBadSettingsWarnAndChangeNothing(t *testing.T) {
	f, clk := &fakeMigrator{}, &fakeClock{t: locT0}
	h := locHarness(t, twoNodes, locConfig("1", `{"policy": "bestEffort", "interval": 5}`, "", ""), f, clk, nil)
	h.settle()
	h.settle()
	evs := h.localityEvents()
	want := workload.AnnotationMemoryLocality + `: unknown field "interval" (known: policy, migrateIntervalMinutes)`
	if f.count() != 0 || len(evs) != 1 || evs[0].Type != eventlog.Warning || evs[0].Reason != "InvalidMemoryLocality" ||
		!strings.HasPrefix(evs[0].Message, want) {
		t.Fatalf("%d migrations, events %+v; want one warning starting %q", f.count(), evs, want)
	}
	if used := `using policy "none" instead`; !strings.Contains(evs[0].Message, used) {
		t.Errorf("warning %q does not name the policy used, %s", evs[0].Message, used)
	}
	if ps := workloadStatus(t, h, "redis").Problems; len(ps) != 1 || !strings.Contains(ps[0], want) {
		t.Errorf("status problems %q", ps)
	}
	// A bad class section refuses the whole file, naming the field; the
	// last good config stays.
	h.writeConfig(locConfig("1", "", "resourceQOSConfig: {clusterStrategy: {lsClass: {memoryLocality: {policy: always}}}}\n", ""))
	h.settle()
	var bad []string
	for _, e := range h.events() {
		if e.Reason == "ConfigInvalid" {
			bad = append(bad, e.Message)
		}
	}
	if len(bad) != 1 || !strings.Contains(bad[0], `clusterStrategy.lsClass.memoryLocality.policy: "always" is not bestEffort or none`) {
		t.Errorf("ConfigInvalid events %q", bad)
	}
	if f.count() != 0 {
		t.Errorf("%d migrations under a refused config", f.count())
	}
}

func TestLocalityNeverBlocksAndStopsWithTheAgent(t *testing.T) {
	f, clk := &fakeMigrator{block: true, started: make(chan struct{}, 1)}, &fakeClock{t: locT0}
	h := locHarness(t, twoNodes, locConfig("1", `{"policy": "bestEffort", "migrateIntervalMinutes": 1}`, "", ""), f, clk, nil)
	h.reconcile()
	select {
	case <-f.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the migration did not start")
	}
	clk.t = clk.t.Add(time.Hour)
	done := make(chan struct{})
	go func() { h.a.Reconcile(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a reconcile waited for a running migration")
	}
	stopped := make(chan struct{})
	go func() { h.a.Close(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stopping the agent did not cancel the migration")
	}
	if f.count() != 1 {
		t.Errorf("%d migrations, want 1: a running one is not queued again", f.count())
	}
	if evs := h.localityEvents(); len(evs) != 0 {
		t.Errorf("a cancelled migration reported %+v", evs)
	}
	if _, err := os.Stat(filepath.Join(h.opts.StateDir, LocalityFile)); !os.IsNotExist(err) {
		t.Errorf("a cancelled migration was recorded: %v", err)
	}
	h.settle() // a stopped agent starts nothing more
	if f.count() != 1 {
		t.Errorf("%d migrations after stop", f.count())
	}
}

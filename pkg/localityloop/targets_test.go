package localityloop

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// locWorkload is a workload as the plan sees it, with one container, its
// text read as it arrives.
func locWorkload(name string, kube memqos.KubeQoS, labels, annotations map[string]string) workload.Workload {
	w := workload.Workload{Name: name, Cgroup: "pods/" + name, Containers: []workload.Container{{Name: name, Cgroup: "pods/" + name}},
		QoS: workload.ClassifyQoS(labels, annotations, kube)}
	w.SetMemoryLocality(annotations)
	return w
}

func TestLocalityTargets(t *testing.T) {
	bestEffort := sloconfig.Locality{Policy: sloconfig.LocalityBestEffort}
	every10 := sloconfig.Locality{Policy: sloconfig.LocalityBestEffort, MigrateIntervalMinutes: 10}
	classes := map[string]sloconfig.Locality{"lsClass": bestEffort, "lsrClass": every10}
	ann := func(v string) map[string]string { return map[string]string{workload.AnnotationMemoryLocality: v} }
	ls := map[string]string{workload.LabelQoSClass: "LS"}
	be := map[string]string{workload.LabelQoSClass: "be"}
	onNode0 := decide.WorkloadState{Pool: "exclusive", CPUs: "1", NUMANodes: []int{0}}
	tests := []struct {
		name    string
		w       workload.Workload
		st      decide.WorkloadState
		classes map[string]sloconfig.Locality
		nodes   []int
		want    *sloconfig.Locality // nil: not a target
		skip    string
		problem string
	}{
		{"class config alone", locWorkload("w", memqos.Burstable, ls, nil), onNode0, classes, []int{0, 1}, &bestEffort, "", ""},
		{"annotation wins over the class", locWorkload("w", memqos.Burstable, ls, ann(`{"policy":"bestEffort","migrateIntervalMinutes":10}`)),
			onNode0, classes, []int{0, 1}, &every10, "", ""},
		{"annotation none beats the class", locWorkload("w", memqos.Burstable, ls, ann(`{"policy":"none"}`)), onNode0, classes, []int{0, 1}, nil, "", ""},
		{"annotation alone, policy in any case", locWorkload("w", memqos.Burstable, nil, ann(`{"policy":"BestEffort"}`)), onNode0, nil, []int{0, 1}, &bestEffort, "", ""},
		{"neither: off", locWorkload("w", memqos.Burstable, ls, nil), onNode0, nil, []int{0, 1}, nil, "", ""},
		{"BE reads beClass, absent", locWorkload("w", memqos.BestEffort, be, nil), onNode0, classes, []int{0, 1}, nil, "", ""},
		{"unlabelled Guaranteed reads lsrClass", locWorkload("w", memqos.Guaranteed, nil, nil), onNode0, classes, []int{0, 1}, &every10, "", ""},
		{"unlabelled BestEffort is BE", locWorkload("w", memqos.BestEffort, nil, nil), onNode0,
			map[string]sloconfig.Locality{"lsClass": bestEffort}, []int{0, 1}, nil, "", ""},
		{"bad JSON is a problem naming the annotation", locWorkload("w", memqos.Burstable, ls, ann(`{"policy":`)), onNode0, classes, []int{0, 1},
			nil, "", workload.AnnotationMemoryLocality + `: "{\"policy\":" is not a JSON object`},
		{"bad field is a problem naming it", locWorkload("w", memqos.Burstable, ls, ann(`{"policy":"always"}`)), onNode0, classes, []int{0, 1},
			nil, "", workload.AnnotationMemoryLocality + `.policy: "always" is not bestEffort or none`},
		// No CPUs of its own: skipped with the seed's "no target numa", not left out.
		{"shared pool: skipped", locWorkload("w", memqos.Burstable, ls, ann(`{"policy":"bestEffort"}`)),
			decide.WorkloadState{Pool: "shared", CPUs: "1-3", NUMANodes: []int{0}}, nil, []int{0, 1}, &bestEffort, locality.ReasonNoTargetNUMA, ""},
		{"BE pool: skipped", locWorkload("w", memqos.BestEffort, be, ann(`{"policy":"bestEffort"}`)),
			decide.WorkloadState{Pool: "be", CPUs: "1-3", NUMANodes: []int{0}}, nil, []int{0, 1}, &bestEffort, locality.ReasonNoTargetNUMA, ""},
		{"shared pool, policy none: not a target", locWorkload("w", memqos.Burstable, ls, ann(`{"policy":"bestEffort","migrateIntervalMinutes":"none"}`)),
			decide.WorkloadState{Pool: "shared", CPUs: "1-3", NUMANodes: []int{0}}, nil, []int{0, 1}, nil, "", ""},
		{"interval none turns the class's bestEffort off", locWorkload("w", memqos.Burstable, ls, ann(`{"policy":"bestEffort","migrateIntervalMinutes":"none"}`)),
			onNode0, classes, []int{0, 1}, nil, "", ""},
		{"static-burst is bound", locWorkload("w", memqos.Burstable, ls, nil),
			decide.WorkloadState{Pool: "static-burst", CPUs: "2-3", NUMANodes: []int{1}}, classes, []int{0, 1}, &bestEffort, "", ""},
		{"one memory node: no target", locWorkload("w", memqos.Burstable, ls, nil), onNode0, classes, []int{0}, &bestEffort, locality.ReasonNoTargetNUMA, ""},
		{"cpuset on every node: no target", locWorkload("w", memqos.Burstable, ls, nil),
			decide.WorkloadState{Pool: "exclusive", CPUs: "1-2", NUMANodes: []int{0, 1}}, classes, []int{0, 1}, &bestEffort, locality.ReasonNoTargetNUMA, ""},
		{"a CPU-less memory node is remote", locWorkload("w", memqos.Burstable, ls, nil),
			decide.WorkloadState{Pool: "exclusive", CPUs: "1-2", NUMANodes: []int{0, 1}}, classes, []int{0, 1, 2}, &bestEffort, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			st.Name = tc.w.Name
			got, probs := Targets([]workload.Workload{tc.w}, []decide.WorkloadState{st}, tc.classes, tc.nodes)
			if tc.problem != "" {
				if len(probs) != 1 || probs[0].Workload != "w" || probs[0].Reason != "InvalidMemoryLocality" ||
					!strings.HasPrefix(probs[0].Message, tc.problem) {
					t.Errorf("problems %+v, want one starting %q", probs, tc.problem)
				}
			} else if len(probs) != 0 {
				t.Errorf("unexpected problems %+v", probs)
			}
			if tc.want == nil {
				if len(got) != 0 {
					t.Errorf("targets %+v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("targets %+v, want one", got)
			}
			g := got[0]
			cpus, local := st.CPUs, st.NUMANodes
			if st.Pool != "exclusive" && st.Pool != "static-burst" { // no CPUs of its own: no cpuset, no local node
				cpus, local = "", nil
			}
			if g.Settings != *tc.want || g.Skip != tc.skip || g.CPUs != cpus || len(g.Containers) != 1 ||
				!slices.Equal(g.Local, local) || !slices.Equal(g.Nodes, tc.nodes) {
				t.Errorf("target %+v, want settings %+v skip %q on %s", g, *tc.want, tc.skip, st.CPUs)
			}
		})
	}
}

func TestLocalityDue(t *testing.T) {
	t0 := time.Date(2024, 2, 27, 10, 0, 0, 0, time.UTC)
	once := sloconfig.Locality{Policy: sloconfig.LocalityBestEffort}
	every10 := sloconfig.Locality{Policy: sloconfig.LocalityBestEffort, MigrateIntervalMinutes: 10}
	target := func(cpus string, s sloconfig.Locality) Target {
		return Target{Name: "w", CPUs: cpus, Settings: s}
	}
	rec := func(cpus string, s sloconfig.Locality) *Record {
		return &Record{CPUs: cpus, Settings: s, Ran: t0}
	}
	tests := []struct {
		name string
		rec  *Record
		t    Target
		now  time.Time
		want bool
	}{
		{"never ran", nil, target("1", once), t0, true},
		{"once: ran", rec("1", once), target("1", once), t0.Add(24 * time.Hour), false},
		{"once: new cpuset runs again", rec("1", once), target("2", once), t0.Add(time.Minute), true},
		{"once: changed setting runs again", rec("1", every10), target("1", once), t0.Add(time.Minute), true},
		{"interval: not yet", rec("1", every10), target("1", every10), t0.Add(9*time.Minute + 59*time.Second), false},
		{"interval: passed", rec("1", every10), target("1", every10), t0.Add(10 * time.Minute), true},
		{"interval: new cpuset runs now", rec("1", every10), target("2", every10), t0.Add(time.Minute), true},
		{"policy none never runs", nil, target("1", sloconfig.Locality{Policy: sloconfig.LocalityNone}), t0, false},
	}
	for _, tc := range tests {
		if got := due(tc.rec, tc.t, tc.now); got != tc.want {
			t.Errorf("%s: due = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPodOutcomeAndStatus(t *testing.T) {
	end := time.Date(2024, 2, 27, 10, 0, 0, 0, time.UTC)
	containers := []workload.Container{{Name: "a", Cgroup: "pods/p/a"}, {Name: "b", Cgroup: "pods/p/b"}}
	moved := locality.Result{Local: []int{0}, Before: locality.NodePages{0: 10, 1: 90}, After: locality.NodePages{0: 100},
		Moved: 90, Processes: []locality.ProcessResult{{PID: 7, Moved: []locality.Move{{From: 1, To: 0, Pages: 90}}}}}
	tests := []struct {
		name      string
		t         Target
		runs      []containerRun
		reason    string
		message   string
		ratio     *int
		pagesMove uint64
	}{
		{"skipped without reading memory", Target{Containers: containers, Skip: locality.ReasonNoTargetNUMA}, nil,
			locality.EventSkipped, "no target numa", intp(100), 0},
		{"one moved, one failed", Target{Containers: containers}, []containerRun{{Name: "a", Result: moved},
			{Name: "b", Err: errors.New("cgroup gone")}}, locality.EventCompleted,
			"Container a completed: migrated memory from remote numa: 1 to local numa: 0\nContainer b failed: cgroup gone\n" +
				"Total: 1 container(s) completed, 1 failed, 0 skipped; cur local memory ratio 100, rest remote memory pages 0", intp(100), 90},
		{"every container failed: no ratio", Target{Containers: containers[:1]}, []containerRun{{Name: "a", Err: errors.New("boom")}},
			locality.EventFailed, "Container a failed: boom\nTotal: 0 container(s) completed, 1 failed, 0 skipped; cur local memory ratio 100, rest remote memory pages 0", nil, 0},
	}
	for _, tc := range tests {
		p := podOutcome(tc.t, tc.runs)
		reason, msg := p.Event()
		if reason != tc.reason || msg != tc.message {
			t.Errorf("%s: event %s %q, want %s %q", tc.name, reason, msg, tc.reason, tc.message)
		}
		s := statusOf(p, tc.runs, end)
		if s.Reason != tc.reason || !s.Time.Equal(end) || s.PagesMigrated != tc.pagesMove || (s.LocalRatio == nil) != (tc.ratio == nil) ||
			(s.LocalRatio != nil && *s.LocalRatio != *tc.ratio) {
			t.Errorf("%s: status %+v (ratio %v), want reason %s ratio %v pages %d", tc.name, s, s.LocalRatio, tc.reason, tc.ratio, tc.pagesMove)
		}
	}
}

func intp(i int) *int { return &i }

// The balancer's unsettled groups become best-effort targets towards their
// nodes, replacing a target skipped for the same workload; one whose nodes
// are all the memory nodes has nowhere to go.
func TestWithBalancer(t *testing.T) {
	nodes := []int{0, 1}
	targets := []Target{{Name: "vm", Skip: locality.ReasonNoTargetNUMA}, {Name: "db", Local: []int{1}}, {Name: "web", Skip: locality.ReasonNoTargetNUMA}}
	got := WithBalancer(targets, []balancerloop.Unsettled{
		{Name: "vm", CPUs: "0-3", Nodes: []int{0}},
		{Name: "wide", CPUs: "0-7", Nodes: []int{0, 1}},
	}, nodes)
	var names []string
	for _, g := range got {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, []string{"db", "web", "vm", "wide"}) {
		t.Fatalf("targets %v, want db web vm wide", names)
	}
	vm, wide := got[2], got[3]
	if vm.Skip != "" || vm.CPUs != "0-3" || !slices.Equal(vm.Local, []int{0}) || !slices.Equal(vm.Nodes, nodes) ||
		vm.Settings.Policy != sloconfig.LocalityBestEffort {
		t.Errorf("vm's target %+v", vm)
	}
	if wide.Skip != locality.ReasonNoTargetNUMA {
		t.Errorf("wide's target skip %q, want %q", wide.Skip, locality.ReasonNoTargetNUMA)
	}
	if got := WithBalancer(targets, nil, nodes); len(got) != 3 {
		t.Errorf("without groups: %d targets, want the 3 given", len(got))
	}
}

package source

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/workload"
	"k8s.io/utils/cpuset"
)

// fixed is a Source whose snapshot the test sets.
type fixed struct {
	snap    Snapshot
	decided []Decision
}

func (f *fixed) Name() string             { return "fixed" }
func (f *fixed) Changed() <-chan struct{} { return nil }
func (f *fixed) Snapshot(Env) Snapshot    { return f.snap }
func (f *fixed) Decided(d Decision)       { f.decided = append(f.decided, d) }
func problem(name string) []workload.Problem {
	return []workload.Problem{{Workload: name, Reason: "R"}}
}

// An unchanged snapshot gives the very same config; workloads are the
// caller's to append problems to; a config that cannot be made keeps the
// last and says why; the decision reaches the source.
func TestLoader(t *testing.T) {
	src := &fixed{snap: Snapshot{Reserved: cpuset.New(0), BEPool: cpuset.New(3), MemoryQoSHeld: "held",
		Workloads: []Workload{{Plan: workload.Workload{Name: "ns/a", Cgroup: "pod-a"}, Class: "LS", Problems: append(make([]workload.Problem, 0, 4), problem("ns/a")...)}}}}
	l := NewLoader(src, nil)
	cfg, snap := l.Load(Env{})
	if !cfg.Reserved.Equals(cpuset.New(0)) || !cfg.BEPool.Equals(cpuset.New(3)) || cfg.MemQoSHeld != "held" || snap.Error != "" {
		t.Fatalf("config %+v, error %q", cfg, snap.Error)
	}
	if len(snap.Workloads) != 1 || snap.Workloads[0].Class != "LS" || snap.Workloads[0].Plan.Name != "ns/a" {
		t.Fatalf("workloads %+v", snap.Workloads)
	}
	first := append(snap.Workloads[0].Problems, workload.Problem{Reason: "First"})
	again, snap := l.Load(Env{})
	if again != cfg {
		t.Error("an unchanged snapshot gave another config")
	}
	second := append(snap.Workloads[0].Problems, workload.Problem{Reason: "Second"})
	if len(snap.Workloads[0].Problems) != 1 || first[1].Reason != "First" || second[1].Reason != "Second" {
		t.Errorf("the problems appended by two reconciles share their slice: %+v, %+v", first, second)
	}

	src.snap.ResourceQoSConfig = "{"
	src.snap.Error = "pods"
	bad, snap := l.Load(Env{})
	if !strings.HasPrefix(snap.Error, "pods; resource-qos-config: ") || bad == cfg || !bad.Reserved.Equals(cfg.Reserved) {
		t.Errorf("bad resource-qos-config: error %q, config %+v", snap.Error, bad)
	}

	l.Decided(nil, decide.Desired{Pools: decide.Pools{Reserved: cpuset.New(0, 1)},
		Assignments: map[string]workload.Assignment{"ns/a": {CPUs: cpuset.New(2)}}})
	if len(src.decided) != 1 || !src.decided[0].Reserved.Equals(cpuset.New(0, 1)) || !src.decided[0].Assignments["ns/a"].CPUs.Equals(cpuset.New(2)) {
		t.Errorf("decided %+v", src.decided)
	}
}

// A pod's container cgroups, listed by its status or not yet, are ready
// with the pod's; a workload whose
// container is its own cgroup adds nothing.
func TestMarkContainers(t *testing.T) {
	ready := map[string]bool{"pod-a": true, "pod-b": false, "host": true}
	MarkContainers(workload.Workload{Cgroup: "pod-a", Containers: []workload.Container{{Name: "app", Cgroup: "pod-a/app"}}}, ready)
	MarkContainers(workload.Workload{Cgroup: "pod-b", Containers: []workload.Container{{Name: "app", Cgroup: "pod-b/app"}}}, ready)
	MarkContainers(workload.Workload{Cgroup: "host", Containers: []workload.Container{{Name: "host", Cgroup: "host"}}}, ready)
	MarkContainers(workload.Workload{Cgroup: "pod-a", Unlisted: []string{"pod-a/new"}}, ready)
	MarkContainers(workload.Workload{Cgroup: "pod-b", Unlisted: []string{"pod-b/new"}}, ready)
	if len(ready) != 7 || !ready["pod-a/app"] || ready["pod-b/app"] || !ready["host"] || !ready["pod-a/new"] || ready["pod-b/new"] {
		t.Errorf("ready %v", ready)
	}
	if _, ok := ready["pod-b/app"]; !ok {
		t.Error("a container of a pod not ready is not marked")
	}
}

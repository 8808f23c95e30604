package source

import (
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// fixed is a Source whose snapshot the test sets.
type fixed struct {
	snap    Snapshot
	decided []Outcome
}

func (f *fixed) Name() string             { return "fixed" }
func (f *fixed) Changed() <-chan struct{} { return nil }
func (f *fixed) Snapshot(Env) Snapshot    { return f.snap }
func (f *fixed) Reconciled(d Outcome)     { f.decided = append(f.decided, d) }
func problem(name string) []workload.Problem {
	return []workload.Problem{{Workload: name, Reason: "R"}}
}

// An unchanged snapshot gives the very same config; workloads are the
// caller's to append problems to; the config is what the snapshot's SLO
// configuration, decoded already, puts in force on a node with its labels;
// the decision reaches the source.
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

	rq, err := sloconfig.ParseResourceQoS(`{"clusterStrategy": {"beClass": {"memoryQOS": {"enable": true}}},
	  "nodeStrategies": [{"name": "big", "nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": {"throttlingPercent": 50}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	src.snap.SLO.ResourceQoS = rq
	src.snap.SLO.Namespaces.Enabled = []string{"ns"}
	cluster, snap := l.Load(Env{})
	if cluster == cfg || cluster.NodeStrategy != "" || cluster.MemQoS.BE == nil || cluster.MemQoS.BE.Params.ThrottlingPercent != nil ||
		!slices.Equal(cluster.Namespaces.Enabled, []string{"ns"}) || !cluster.Reserved.Equals(cfg.Reserved) || snap.Error != "" {
		t.Errorf("cluster strategy: config %+v, error %q", cluster, snap.Error)
	}
	src.snap.NodeLabels = map[string]string{"pool": "big"}
	node, _ := l.Load(Env{})
	if node == cluster || node.NodeStrategy != "big" || *node.MemQoS.BE.Params.ThrottlingPercent != 50 || !*node.MemQoS.BE.Enable {
		t.Errorf("the node's entry: config %+v", node)
	}

	l.Reconciled(nil, decide.Desired{Pools: decide.Pools{Reserved: cpuset.New(0, 1)},
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

package execute

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// moveScenario is a fixture tree and a decision that moves left or right
// so that big, 8 CPUs in the shared pool, fits on one NUMA node.
type moveScenario struct {
	root   string
	h      *cgroup.Hierarchy
	shared cpuset.CPUSet // big's cpuset.cpus before the decision
	obs    decide.Observation
	prev   map[string]workload.Assignment // in force before the decision
	rd     decide.Ready
}

func newMoveScenario(t *testing.T) moveScenario {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{"cgroup.controllers": "cpuset", "cgroup.subtree_control": "cpuset"}
	pod := func(cpus string) map[string]string {
		return map[string]string{"cgroup.procs": "", "cpuset.cpus": cpus, "cpuset.mems": "0-1"}
	}
	writeTree(t, root, map[string]map[string]string{"": files, "pods": files,
		"pods/big": pod("0-3,12-15"), "pods/left": pod("4-7"), "pods/right": pod("8-11")})
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	shape := fixture.Shape{Name: "2n-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
		CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 << 30}
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New(), MovesEnabled: true}
	obs := decide.Observation{Topology: fixture.MustBuild(shape), Config: cfg, Prepared: map[string]bool{}, Now: time.Unix(1e9, 0)}
	mem := decide.Memory{Assignments: map[string]workload.Assignment{
		"left": {CPUs: cpuset.New(4, 5, 6, 7), Policy: cpualloc.FullPCPUs}, "right": {CPUs: cpuset.New(8, 9, 10, 11), Policy: cpualloc.FullPCPUs}}}
	for _, w := range []struct {
		name    string
		cpus    int
		movable bool
	}{{"big", 8, false}, {"left", 4, true}, {"right", 4, true}} {
		cg := "pods/" + w.name
		obs.Workloads = append(obs.Workloads, workload.Workload{Name: w.name, Cgroup: cg, Movable: w.movable,
			Containers: []workload.Container{{Name: w.name, Cgroup: cg}},
			CPU:        workload.CPUNeed{Exclusive: true, CPUs: w.cpus, Policy: cpualloc.FullPCPUs}})
		obs.Prepared[cg] = true
	}
	rd := decide.Decide(obs, mem)
	if len(rd.Desired.Moves) != 1 {
		t.Fatalf("moves %v, want one", rd.Desired.Moves)
	}
	return moveScenario{root: root, h: h, shared: cpuset.New(0, 1, 2, 3, 12, 13, 14, 15), obs: obs, prev: mem.Assignments, rd: rd}
}

// cpus reads a cgroup's cpuset.cpus.
func (s moveScenario) cpus(t *testing.T, cg string) cpuset.CPUSet {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.root, cg, "cpuset.cpus"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := topology.ParseCPUList(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestMovedWorkloadLeavesBeforeTheAdmittedOneArrives: of a decision that
// moves a workload so that another fits, the moved workload's cpuset is
// written before the admitted one takes its CPUs, so that at no point
// between two batches does a CPU the admitted workload holds belong to
// another.
func TestMovedWorkloadLeavesBeforeTheAdmittedOneArrives(t *testing.T) {
	s := newMoveScenario(t)
	checks := 0
	noTwoOwners := func() {
		checks++
		big := s.cpus(t, "pods/big")
		if big.Equals(s.shared) {
			return // still in the shared pool, which exclusive CPUs leave as they are taken
		}
		for _, cg := range []string{"pods/left", "pods/right"} {
			if both := big.Intersection(s.cpus(t, cg)); !both.IsEmpty() {
				t.Errorf("check %d: CPUs %s are both big's and %s's", checks, both, cg)
			}
		}
	}
	c := testConfig(t, s.h, cgroup.NewMemoryStore(), &events{})
	c.BetweenBatches = noTwoOwners
	e := mustNew(t, c)
	rep := e.Apply(s.rd, TargetsOf(s.obs.Workloads))
	if len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	noTwoOwners()
	if got, want := s.cpus(t, "pods/big"), s.rd.Desired.Assignments["big"].CPUs; !got.Equals(want) || checks < 2 {
		t.Errorf("big: cpuset.cpus %s, want %s (%d checks)", got, want, checks)
	}
}

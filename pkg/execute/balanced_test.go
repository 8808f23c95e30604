package execute

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// The cgroups the NUMA balancer names that are no workload's are written
// and restored from the decision like any workload's, named by themselves
// in what is told; the report says which of them could not be written.
func TestApplyBalancedCgroups(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory"}
	vm := map[string]string{"cgroup.procs": "", "cpuset.cpus": "0-191", "cpuset.mems": "0-1"}
	writeTree(t, root, map[string]map[string]string{"": files, "vms": files, "vms/vm1": vm, "vms/vm2": vm, "vms/vm3": vm})
	// vm3's cpuset.cpus cannot be written: a directory stands in its place.
	if err := os.Remove(filepath.Join(root, "vms/vm3/cpuset.cpus")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "vms/vm3/cpuset.cpus"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	orig := cgroup.NewMemoryStore()
	if err := orig.RecordOriginals(map[string]string{"vms/vm2/cpuset.cpus": "0-7", "vms/vm2/cpuset.mems": "0"}); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	e := mustNew(t, testConfig(t, h, orig, ev))
	topo := fixture.MustBuild(fixture.Intel2S96C)
	node1 := topo.CPUsWhere(func(c topology.CPU) bool { return c.NUMA == 1 })
	obs := decide.Observation{Topology: topo, Config: &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New()},
		Balanced: decide.Balanced{Cgroups: map[string]decide.Placement{"vms/vm1": {CPUs: node1, Nodes: []int{1}, Home: true}, "vms/vm3": {}},
			Released: []string{"vms/vm2"}}}
	rep := e.Apply(decide.Decide(obs, decide.Memory{}), TargetsOf(nil))
	for cg, want := range map[string][2]string{"vms/vm1": {node1.String(), "1"}, "vms/vm2": {"0-7", "0"}} {
		cpus, _ := os.ReadFile(filepath.Join(root, cg, "cpuset.cpus"))
		mems, _ := os.ReadFile(filepath.Join(root, cg, "cpuset.mems"))
		if string(cpus) != want[0] || string(mems) != want[1] {
			t.Errorf("%s: cpuset.cpus %q, cpuset.mems %q; want %q, %q", cg, cpus, mems, want[0], want[1])
		}
	}
	if !rep.Failed("vms/vm3") || rep.Failed("vms/vm1") || rep.Failed("vms/vm2") {
		t.Errorf("failed: vm1 %v, vm2 %v, vm3 %v; want only vm3", rep.Failed("vms/vm1"), rep.Failed("vms/vm2"), rep.Failed("vms/vm3"))
	}
	for _, want := range []string{"CgroupUpdated vms/vm1: cpuset.mems=1 cpuset.cpus=" + node1.String(), "CgroupUpdated vms/vm2: cpuset.cpus=0-7 cpuset.mems=0"} {
		if !slices.Contains(*ev, want) {
			t.Errorf("events %q lack %q", *ev, want)
		}
	}
}

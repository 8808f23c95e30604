package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/hugetest"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/topology"
)

// TestGuestHugePagesPlaceAndRefuse runs the standalone agent on the real
// kernel with 64 MiB of 2 MiB pages reserved on node 1 only: a pinned
// workload asking 48 MiB of them gets CPUs on node 1 and cpuset.mems 1; a
// second one asking as much no longer fits anywhere and is refused with a
// Warning naming the huge pages, and the agent keeps reconciling.
func TestGuestHugePagesPlaceAndRefuse(t *testing.T) {
	parent := realV2(t)
	hugetest.Reserve(t, 1, 32)
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) < 2 || topo.Nodes[1].CPUs.IsEmpty() {
		skipOrFail(t, "needs two NUMA nodes with CPUs, found %d", len(topo.Nodes))
	}
	workload := func(name string) string {
		return fmt.Sprintf(`- name: %s
  command: [sleep, "600"]
  qosClass: LS
  resources: {limits: {cpu: "1", memory: 32Mi, hugepages-2Mi: 48Mi}}
  annotations: {cpuset-scheduler: "true"}
`, name)
	}
	cfg := fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
cgroupParent: %s
workloads:
%s%s`, parent, workload("first"), workload("second"))
	a, cfgFile := realV2Agent(t, cfg, nil)
	mustReconcile(t, a)
	ck, _ := a.store.Load()
	first, ok := ck.Assignments["first"]
	if !ok {
		t.Fatalf("first has no CPUs of its own: assignments %v", ck.Assignments)
	}
	if nodes := topo.NodesOf(first.CPUs); len(nodes) != 1 || nodes[0] != 1 {
		t.Errorf("first on CPUs %s, nodes %v: want node 1, the only one with huge pages", first.CPUs, nodes)
	}
	if got := readV2(t, parent+"/first", "cpuset.mems"); got != "1" {
		t.Errorf("first: cpuset.mems = %s, want 1", got)
	}
	if second, ok := ck.Assignments["second"]; ok {
		t.Errorf("second got CPUs %s although node 1 has 16 MiB of huge pages left", second.CPUs)
	}
	// Refused, it still runs, in the shared pool, and the agent goes on.
	mustReconcile(t, a)
	if ck.Workloads["second"].Started == nil {
		t.Error("second was not started in the shared pool")
	}
	evs, err := eventlog.Read(a.opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	for _, e := range evs {
		if e.Workload == "second" && e.Type == "Warning" {
			told = append(told, e.Reason+": "+e.Message)
		}
	}
	if len(told) != 1 || !strings.Contains(told[0], "hugepages-2Mi") {
		t.Fatalf("second's Warnings %q: want one, naming hugepages-2Mi", told)
	}
	t.Logf("second refused: %s", told[0])

	// Dropping both stops them and removes the sub-tree Locus created.
	if err := writeSettled(cfgFile, []byte(cfg[:strings.Index(cfg, "workloads:")]+"workloads: []\n")); err != nil {
		t.Fatal(err)
	}
	mustReconcile(t, a)
	if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, parent)); !os.IsNotExist(err) {
		t.Errorf("created parent %s not removed: %v", parent, err)
	}
}

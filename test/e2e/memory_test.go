package e2e

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// onFixtureMachine runs the agent as a host process reading a sysfs tree of
// one NUMA node with this host's CPUs and memoryBytes of memory, until the
// test ends; then the node's own agent again. The host has one NUMA node, so
// its memory is what a fixture narrows.
func (n *e2eNode) onFixtureMachine(t *testing.T, memoryBytes uint64) *topology.Topology {
	t.Helper()
	host, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if want := host.CPUSet(); want.Size() < 2 || want.List()[want.Size()-1] != want.Size()-1 {
		t.Fatalf("this host's CPUs %s are not 0-N: a fixture of one node cannot name them", want)
	}
	shape := fixture.Shape{Name: "e2e-one-node", Sockets: 1, NUMAPerSocket: 1, L3PerNUMA: 1,
		CoresPerSocket: len(host.CPUs), ThreadsPerCore: 1, MemoryPerNode: memoryBytes}
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fixture.WriteSysfs(shape, dir); err != nil {
		t.Fatal(err)
	}
	start := "agent"
	if n.mode == "chart" {
		start = "host-agent"
	}
	n.e2e(t, "stop", "agent")
	t.Cleanup(func() {
		// Before t.Setenv's own restore, which runs after this.
		os.Setenv("LOCUS_E2E_AGENT_ARGS", "")
		n.e2e(t, "stop", start)
		n.e2e(t, "start", "agent")
	})
	t.Setenv("LOCUS_E2E_AGENT_ARGS", "--sysfs-root="+dir)
	n.e2e(t, "start", start)
	return fixture.MustBuild(shape)
}

// On the real node, the agent reading a machine whose one NUMA node has
// 1 GiB: a pinned pod asking 256 MiB gets a CPU of its own and cpuset.mems 0;
// one asking 2 GiB, more than any node holds, is refused with the reason
// (CPUAllocationFailed naming the memory and what the node has free) and
// runs in the shared pool, and the agent goes on.
func TestMemoryPlacedAsTheNodeHolds(t *testing.T) {
	n := need(t)
	machine := n.onFixtureMachine(t, 1<<30)
	ns := n.namespace(t, "memory")
	n.expected[ns+"/CPUAllocationFailed"] = true
	pinned := map[string]string{"cpuset-scheduler": "true"}
	n.createPod(t, ns, podSpec{name: "big", memory: "2Gi/2Gi", cpu: "1", annotations: pinned})
	n.createPod(t, ns, podSpec{name: "fits", memory: "256Mi/256Mi", cpu: "1", annotations: pinned})

	fits := n.waitRunning(t, ns, "fits")
	own := waitCPUs(t, n.containerCgroup(t, fits, "w", "cpuset"), 1)
	if mems := readFile(t, filepath.Join(n.containerCgroup(t, fits, "w", "cpuset"), "cpuset.mems")); mems != "0" {
		t.Errorf("fits: cpuset.mems %s, want 0", mems)
	}
	n.waitEvent(t, ns, "Pod", "fits", corev1.EventTypeNormal, "CPUsAssigned", own.String())

	n.waitEvent(t, ns, "Pod", "big", corev1.EventTypeWarning, "CPUAllocationFailed", "memory: 2.0GiB asked; free per node: 0: ")
	big := n.waitRunning(t, ns, "big")
	waitFile(t, filepath.Join(n.containerCgroup(t, big, "w", "cpuset"), "cpuset.cpus"), machine.CPUSet().Difference(own).String())
	for _, e := range n.events(t, ns, "Pod", "big", "CPUsAssigned") {
		t.Errorf("big was pinned: %s", e.Message)
	}
}

package smoke

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
)

// TestSysfsNodes checks the kernel's own view: the online nodes and each
// node's CPUs are those QEMU was told to create.
func TestSysfsNodes(t *testing.T) {
	l := guest(t)
	dir := "/sys/devices/system/node"
	if got := readTrim(t, filepath.Join(dir, "online")); got != fmt.Sprintf("0-%d", l.lastNode()) {
		t.Errorf("%s/online = %q, want 0-%d", dir, got, l.lastNode())
	}
	for n, want := range l.nodeCPUs {
		path := filepath.Join(dir, fmt.Sprintf("node%d", n), "cpulist")
		got, err := topology.ParseCPUList(readTrim(t, path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !got.Equals(want) {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
}

// TestDiscover checks that the project's topology discovery sees the guest as
// QEMU built it: the nodes, their CPUs and memory, and the distance matrix.
func TestDiscover(t *testing.T) {
	l := guest(t)
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	checkTopology(t, "Discover(/sys)", topo, l)
}

// TestLocusTopologyJSON runs the locus binary shipped in the guest and reads
// its JSON back, so the command line path is proven on a NUMA kernel too.
func TestLocusTopologyJSON(t *testing.T) {
	l := guest(t)
	out, err := exec.Command("locus", "topology", "-o", "json").Output()
	if err != nil {
		t.Fatalf("locus topology -o json: %v", err)
	}
	var topo topology.Topology
	if err := json.Unmarshal(out, &topo); err != nil {
		t.Fatalf("locus topology -o json printed unreadable JSON: %v\n%s", err, out)
	}
	checkTopology(t, "locus topology -o json", &topo, l)
}

func checkTopology(t *testing.T, source string, topo *topology.Topology, l layout) {
	t.Helper()
	if len(topo.Nodes) != len(l.nodeCPUs) {
		t.Fatalf("%s: %d nodes, want %d", source, len(topo.Nodes), len(l.nodeCPUs))
	}
	for i, n := range topo.Nodes {
		if n.ID != i {
			t.Errorf("%s: node %d has id %d", source, i, n.ID)
		}
		if !n.CPUs.Equals(l.nodeCPUs[i]) {
			t.Errorf("%s: node %d cpus %s, want %s", source, i, n.CPUs, l.nodeCPUs[i])
		}
		if !slices.Equal(n.Distances, l.distances[i]) {
			t.Errorf("%s: node %d distances %v, want %v", source, i, n.Distances, l.distances[i])
		}
		if n.MemoryTotal == 0 {
			t.Errorf("%s: node %d reports no memory", source, i)
		}
	}
	for _, c := range topo.CPUs {
		if c.NUMA < 0 || c.NUMA >= len(l.nodeCPUs) || !l.nodeCPUs[c.NUMA].Contains(c.ID) {
			t.Errorf("%s: cpu %d placed on node %d", source, c.ID, c.NUMA)
		}
	}
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

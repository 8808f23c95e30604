package topology_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
)

// reserveHugePages sets a node's count of 2 MiB pages on the real kernel and
// puts the old count back at cleanup. It skips on an ordinary host (where
// reserving would take the host's memory) and fails in the NUMA test guest.
func reserveHugePages(t *testing.T, node int, pages uint64) {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("reserves huge pages on the machine: runs in the NUMA test guest (bash test/numavm/run.sh --pkgs ./pkg/topology)")
	}
	path := fmt.Sprintf("/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages", node)
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the guest's kernel has no 2 MiB pages on node %d: %v", node, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Errorf("restore %s to %s: %v", path, strings.TrimSpace(string(old)), err)
		}
	})
	if err := os.WriteFile(path, []byte(strconv.FormatUint(pages, 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if strings.TrimSpace(string(got)) != strconv.FormatUint(pages, 10) {
		t.Fatalf("asked the kernel for %d pages on node %d, it reserved %s", pages, node, strings.TrimSpace(string(got)))
	}
}

// On a real kernel with two nodes, pages reserved on node 1 only are found
// on node 1 only, all of them free.
func TestGuestHugePagesFoundOnTheirNode(t *testing.T) {
	reserveHugePages(t, 1, 16)
	top, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Nodes) < 2 {
		t.Fatalf("%d NUMA nodes, the test needs two", len(top.Nodes))
	}
	n0, n1 := top.Nodes[0], top.Nodes[1]
	if h := n1.HugePagesOf(topology.HugePages2MiKiB); h.Total != 16 || h.Free != 16 {
		t.Errorf("node 1: 2 MiB pool %+v, want 16 pages, all free", h)
	}
	if h := n0.HugePagesOf(topology.HugePages2MiKiB); h.Total != 0 {
		t.Errorf("node 0: 2 MiB pool %+v, want none reserved", h)
	}
	t.Logf("node 0 pools %+v, node 1 pools %+v", n0.HugePages, n1.HugePages)
}

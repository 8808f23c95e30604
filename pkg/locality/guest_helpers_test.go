//go:build linux

package locality

import (
	"os"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

// guestEnv is set to 1 inside the NUMA test guest (test/numavm).
const guestEnv = "LOCUS_NUMAVM"

// multiNode returns the machine's topology when it has at least two NUMA
// nodes with memory. Elsewhere the test skips: these tests need ≥ 2 NUMA
// nodes, which the test guest provides. Inside the guest, fewer is a failure.
func multiNode(t *testing.T) *topology.Topology {
	t.Helper()
	nodes, err := MemoryNodes("")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) < 2 {
		if os.Getenv(guestEnv) == "1" {
			t.Fatalf("the test guest has memory nodes %v, want at least 2", nodes)
		}
		t.Skipf("needs ≥ 2 NUMA nodes with memory (this machine has %v); run it in the NUMA test guest: bash test/numavm/run.sh --pkgs ./pkg/locality", nodes)
	}
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// nodeCPUs is the CPU list of node id.
func nodeCPUs(t *testing.T, topo *topology.Topology, id int) string {
	t.Helper()
	n, ok := topo.Node(id)
	if !ok || n.CPUs.IsEmpty() {
		t.Fatalf("node %d has no CPUs", id)
	}
	return n.CPUs.String()
}

// requireOn fails unless every page of the child's region is on node.
func requireOn(t *testing.T, c *child, node int) {
	t.Helper()
	got := c.regionNodes(t)
	if got[int32(node)] != c.bytes/4096 {
		t.Fatalf("child %d region: pages by status %v, want all %d on node %d", c.pid(), got, c.bytes/4096, node)
	}
}

// requireIntact fails unless the running child's memory checksums as it did
// when it was filled.
func requireIntact(t *testing.T, c *child) {
	t.Helper()
	if got := c.checksum(t); got != c.sum {
		t.Fatalf("child %d: checksum %x after migration, want %x", c.pid(), got, c.sum)
	}
}

// killOnCall kills a child right after the migrator's n-th move_pages
// call, that is in the middle of a migration, however fast the calls go.
func killOnCall(t *testing.T, n int, c *child) {
	calls := 0
	traceCall = func(PageClass, int, int, time.Duration) {
		if calls++; calls == n {
			c.kill()
		}
	}
	t.Cleanup(func() { traceCall = nil })
}

// quietBalancer turns off the kernel's automatic NUMA balancing for the
// test, inside the test guest only, so that what moves is what the migrator
// moved: with it on, a process that touches remote memory gets it migrated by
// the kernel too (and status queries see pages in flux). The setting is
// restored afterwards. TestGuestMigrateWithKernelBalancing keeps it on.
func quietBalancer(t *testing.T) { setBalancer(t, "0") }

// balancerOn turns the kernel's automatic NUMA balancing on for the test,
// inside the test guest (which boots with it off); elsewhere the machine's
// setting stays.
func balancerOn(t *testing.T) {
	t.Helper()
	setBalancer(t, "1")
	if !numaBalancing("") {
		t.Skip("needs kernel.numa_balancing on (the test guest turns it on itself)")
	}
}

func setBalancer(t *testing.T, value string) {
	t.Helper()
	const path = "/proc/sys/kernel/numa_balancing"
	if os.Getenv(guestEnv) != "1" {
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the test guest's kernel has no NUMA balancing: %v", err)
	}
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		t.Fatalf("set NUMA balancing to %s: %v", value, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(path, old, 0); err != nil {
			t.Errorf("restore NUMA balancing to %q: %v", old, err)
		}
	})
}

package smoke

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestNumactlHardware runs `numactl -H` and checks it reports the guest's
// nodes and distance rows, proving the copied binary and its libraries work.
func TestNumactlHardware(t *testing.T) {
	l := guest(t)
	out, err := exec.Command("numactl", "-H").CombinedOutput()
	if err != nil {
		t.Fatalf("numactl -H: %v\n%s", err, out)
	}
	t.Logf("numactl -H:\n%s", out)
	want := []string{fmt.Sprintf("available: %d nodes (0-%d)", len(l.nodeCPUs), l.lastNode())}
	for n, set := range l.nodeCPUs {
		want = append(want, fmt.Sprintf("node %d cpus: %s", n, strings.Trim(fmt.Sprint(set.List()), "[]")))
		row := fmt.Sprintf("%3d:", n)
		for _, d := range l.distances[n] {
			row += fmt.Sprintf(" %3d", d)
		}
		want = append(want, row)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("numactl -H lacks %q", w)
		}
	}
}

// TestMigratePeersAndSyscall binds a holder process to node 1 with numactl,
// moves its memory to node 0 with migratepages, back to node 1 with the
// migrate_pages syscall itself, and checks numastat sees the process.
func TestMigratePeersAndSyscall(t *testing.T) {
	guest(t)
	h := startHolder(t, "numactl", "--membind=1", "--")
	h.alloc(t)
	waitOnNode(t, h.pid, h.addrs, 1)

	pid := fmt.Sprint(h.pid)
	if out, err := exec.Command("migratepages", pid, "1", "0").CombinedOutput(); err != nil {
		t.Fatalf("migratepages %s 1 0: %v\n%s", pid, err, out)
	}
	waitOnNode(t, h.pid, h.addrs, 0)

	left, err := migratePages(h.pid, []int{0}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("migrate_pages %d: node 0 -> 1 left %d pages", h.pid, left)
	waitOnNode(t, h.pid, h.addrs, 1)

	out, err := exec.Command("numastat", "-p", pid).CombinedOutput()
	if err != nil {
		t.Fatalf("numastat -p %s: %v\n%s", pid, err, out)
	}
	t.Logf("numastat -p %s:\n%s", pid, out)
	if !strings.Contains(string(out), "Node 1") || !strings.Contains(string(out), pid) {
		t.Errorf("numastat -p %s output names neither the process nor node 1", pid)
	}
}

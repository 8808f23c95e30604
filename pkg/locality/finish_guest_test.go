//go:build linux

package locality

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGuestFinishWithMigratePagesKeepsSharedPages gives the migrator a
// budget no call can outlast: after its first move_pages batch the
// controller predicts that the rest fits, and one migrate_pages call moves
// it. Pages the process shares with another (a file both map) must stay
// where they are, as move_pages leaves them, although the migrator runs as
// root.
func TestGuestFinishWithMigratePagesKeepsSharedPages(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	spec := childSpec{mb: 64, bind: 1, cpus: nodeCPUs(t, topo, 0), threads: 1,
		shared: filepath.Join(t.TempDir(), "shared") + ":8"}
	a := startChild(t, spec)
	b := startChild(t, spec) // maps the same 8 MiB, which a placed on node 1
	requireOn(t, a, 1)
	const sharedPages = 8 << 20 / 4096
	if got := pagesOn(t, a.pid(), a.shared, sharedPages); got[1] != sharedPages {
		t.Fatalf("shared file pages by node %v, want all %d on node 1", got, sharedPages)
	}
	res, err := Migrate(context.Background(), Request{PIDs: []int{a.pid()}, Local: []int{0}},
		Options{Margin: guestMargin, Budget: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	pr := res.Processes[0]
	t.Logf("moved %d pages in %d calls, %d shared left; note %q", res.Moved, res.Calls, pr.Shared, pr.Note)
	if pr.Err != "" || !strings.Contains(pr.Note, "migrate_pages") {
		t.Errorf("process result %+v: want it finished with migrate_pages", pr)
	}
	requireOn(t, a, 0)
	requireIntact(t, a)
	if got := pagesOn(t, a.pid(), a.shared, sharedPages); got[1] != sharedPages {
		t.Errorf("shared file pages by node %v after the move, want all %d still on node 1", got, sharedPages)
	}
	b.kill()
}

// pagesOn asks the kernel where n pages of pid from addr are.
func pagesOn(t *testing.T, pid int, addr uintptr, n int) map[int32]int {
	t.Helper()
	addrs, status := make([]uintptr, n), make([]int32, n)
	for i := range addrs {
		addrs[i] = addr + uintptr(i)*4096
	}
	if err := queryPages(pid, addrs, status); err != nil {
		t.Fatal(err)
	}
	out := map[int32]int{}
	for _, st := range status {
		out[st]++
	}
	return out
}

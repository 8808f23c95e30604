package agent

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/rebalance"
)

// TestGuestRebalanceEvensOutTwoNodes is rebalancing on the real kernel, in
// the moves tests' boot: two movable workloads each burning a CPU on NUMA
// node 0 and node 1 idle (nodes 2 and 3 reserved, so these two are the
// pair). Once the imbalance has held for rebalance.Default's samples, one
// is moved to node 1, over the 10 minutes after it, looked at every sample,
// nothing moves again (the two nodes are even, and a move of the other
// would only turn the imbalance round), and its memory has followed, its
// cpuset.mems kept wide (this is cgroup v2).
func TestGuestRebalanceEvensOutTwoNodes(t *testing.T) {
	parent, topo := fourNodeGuest(t)
	g := newGuestAgent(t, filepath.Join(parent, "rebalance"), 19414)
	busy := []string{"p:1:8:true:busy", "q:1:8:true:busy"}
	// Both on node 0 while everything else is reserved; then nodes 2 and 3
	// only are, and node 1 is free.
	g.write(movesHostConfig(g.parent, "2-7", movesRebalance, busy...))
	g.start()
	g.pollFor(3*time.Minute, "p and q started on node 0 with their memory resident", func() bool {
		ck := g.checkpoint()
		return !ck.Assignments["p"].CPUs.IsEmpty() && !ck.Assignments["q"].CPUs.IsEmpty() &&
			g.cpus("p").Equals(ck.Assignments["p"].CPUs) && g.cpus("q").Equals(ck.Assignments["q"].CPUs) &&
			g.filled("p", 8) && g.filled("q", 8)
	})
	before := map[string][]int{"p": topo.NodesOf(g.cpus("p")), "q": topo.NodesOf(g.cpus("q"))}
	if !slices.Equal(before["p"], []int{0}) || !slices.Equal(before["q"], []int{0}) {
		t.Fatalf("setup: p on nodes %v, q on %v, want both on 0", before["p"], before["q"])
	}
	start := time.Now()
	g.write(movesHostConfig(g.parent, "4-7", movesRebalance, busy...))
	g.step("p on %s, q on %s; node 1 free", g.cpus("p"), g.cpus("q"))

	d := rebalance.Default
	// Sustain samples after a first one, each SampleEvery apart, and a
	// reconcile's slack for each under the emulator.
	detect := time.Duration(d.Sustain+1)*d.SampleEvery + time.Minute
	var repinned []eventlog.Event
	g.pollFor(2*detect, "a Repinned event evening out nodes 0 and 1", func() bool {
		repinned = repinnedEvents(g)
		return len(repinned) > 0
	})
	took := time.Since(start)
	moved := repinned[0].Workload
	g.step("%s moved after %.1f s: %s", moved, took.Seconds(), repinned[0].Message)
	if !strings.Contains(repinned[0].Message, "to even out") {
		t.Errorf("Repinned %q, want a rebalancing move", repinned[0].Message)
	}
	g.pollFor(time.Minute, moved+"'s cpuset on node 1", func() bool { return slices.Equal(topo.NodesOf(g.cpus(moved)), []int{1}) })
	noTwoOwners(t, g, "p", "q")

	// The bar is no oscillation over 10 minutes: far longer than a
	// second move needs (Every since the first, and a sustained imbalance
	// measured after it), watched a sample at a time, so that a move and a
	// move back between two looks would still show as Repinned events. It
	// is watched before the memory is checked: the memory locality worker
	// moves a busy workload's pages slowly under the emulator on a loaded
	// host (each move_pages call waits for every vCPU), and the placement
	// does not depend on them.
	watch := 10 * time.Minute
	g.step("watching %v for another move", watch)
	stayed := map[string]string{"p": "q", "q": "p"}[moved]
	for end := time.Now().Add(watch); time.Now().Before(end); time.Sleep(d.SampleEvery) {
		if again := repinnedEvents(g); len(again) != 1 {
			t.Fatalf("Repinned events %+v %v after the move, want the one move alone", again, time.Since(start)-took)
		}
		if got := topo.NodesOf(g.cpus(stayed)); !slices.Equal(got, []int{0}) {
			t.Fatalf("%s on nodes %v, want 0", stayed, got)
		}
		if got := topo.NodesOf(g.cpus(moved)); !slices.Equal(got, []int{1}) {
			t.Fatalf("%s on nodes %v, want 1", moved, got)
		}
	}
	on, total := g.localOn(moved, []int{1})
	g.step("%s's memory on node 1: %d of %d bytes", moved, on, total)
	// Narrowing the busy workload's cpuset.mems is what hung the agent in
	// the kernel: on cgroup v2 it stays wide, and the move said why.
	evs, _ := eventlog.Read(g.state)
	for _, e := range evs {
		if e.Workload == moved && e.Reason == decide.ReasonMemsNarrowed {
			t.Errorf("%s narrowed on cgroup v2: %s", moved, e.Message)
		}
	}
	if !slices.ContainsFunc(evs, func(e eventlog.Event) bool { return e.Workload == moved && e.Reason == decide.ReasonMemsKeptWide }) {
		t.Errorf("no MemsKeptWide event for %s", moved)
	}
	t.Logf("FIGURE rebalance: %s moved from node 0 to node 1 %.1f s after the imbalance began (%d of %d bytes of its memory local after), no move in the %v after",
		moved, took.Seconds(), on, total, watch)
	g.kill()
}

// repinnedEvents is the agent's Repinned events so far.
func repinnedEvents(g *guestAgent) []eventlog.Event {
	evs, _ := eventlog.Read(g.state)
	return slices.DeleteFunc(evs, func(e eventlog.Event) bool { return e.Reason != decide.ReasonRepinned })
}

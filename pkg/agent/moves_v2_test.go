package agent

import (
	"slices"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
)

// TestMovesKeepMemsWideOnV2: on cgroup v2, where narrowing cpuset.mems
// migrates inside the write, the agent tells the decision so: the moved
// workload's cpuset.mems stays on both nodes once its memory followed, the
// move is told by MemsKeptWide and nothing by MemsNarrowed, and the
// checkpoint still follows it.
func TestMovesKeepMemsWideOnV2(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-15")
	tree.set("", "", "cpuset.mems", "0-1")
	tree.mkcg("pods/f", "pods/left", "pods/right", "pods/big")
	h := newHarness(t, tree, movesConfig("f:4:false", "left:4:true", "right:4:true"), func(o *Options) { o.SysfsRoot = sysfs(t, twoNodes16) })
	h.reconcile()
	h.writeConfig(movesConfig("left:4:true", "right:4:true"))
	h.reconcile()
	h.writeConfig(movesConfig("left:4:true", "right:4:true", "big:8:false"))
	h.reconcile()
	following := h.checkpoint().MemsFollowing
	if len(following) != 1 {
		t.Fatalf("checkpoint follows %v, want the moved workload", following)
	}
	var moved string
	for name := range following {
		moved = name
	}
	if got := tree.file("pods/"+moved, "cpuset.mems"); got != "0-1" {
		t.Fatalf("moved %s: cpuset.mems %q, want 0-1", moved, got)
	}
	// All its memory on its new node: v1 would narrow now.
	stat := "anon N0=0 N1=268435456\nfile N0=0 N1=0\nshmem N0=0 N1=0\n"
	if h.checkpoint().Assignments[moved].CPUs.Contains(0) {
		stat = "anon N0=268435456 N1=0\nfile N0=0 N1=0\nshmem N0=0 N1=0\n"
	}
	tree.set("", "pods/"+moved, "memory.numa_stat", stat)
	h.reconcile()
	h.reconcile()
	if got := tree.file("pods/"+moved, "cpuset.mems"); got != "0-1" {
		t.Errorf("moved %s, its memory followed: cpuset.mems %q, want 0-1 kept", moved, got)
	}
	evs := h.events()
	if slices.ContainsFunc(evs, func(e eventlog.Event) bool { return e.Reason == decide.ReasonMemsNarrowed }) {
		t.Errorf("a MemsNarrowed event on cgroup v2")
	}
	if !slices.ContainsFunc(evs, func(e eventlog.Event) bool { return e.Reason == decide.ReasonMemsKeptWide && e.Workload == moved }) {
		t.Errorf("no MemsKeptWide event for %s", moved)
	}
	if f := h.checkpoint().MemsFollowing; len(f) != 1 || f[moved].Wide == nil {
		t.Errorf("checkpoint follows %v, want %s still", f, moved)
	}
}

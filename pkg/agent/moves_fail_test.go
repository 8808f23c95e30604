package agent

import (
	"os"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
)

// TestMoveThatFailsIsUndoneThenRetried: when the moved workload's cpuset
// cannot be written, the workload it made room for is not given its CPUs,
// the checkpoint keeps what was true before, MoveFailed and MoveIncomplete
// say why, and once the cgroup can be written again the next reconcile
// moves it and admits the waiting workload.
func TestMoveThatFailsIsUndoneThenRetried(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-15")
	tree.set("cpuset", "", "cpuset.mems", "0-1")
	tree.mkcg("pods/f", "pods/left", "pods/right", "pods/big")
	h := newHarness(t, tree, movesConfig("f:4:false", "left:4:true", "right:4:true"), func(o *Options) { o.SysfsRoot = sysfs(t, twoNodes16) })
	h.reconcile()
	h.writeConfig(movesConfig("left:4:true", "right:4:true"))
	h.reconcile()
	before := h.checkpoint().Assignments

	// Either may move: neither's cpuset.cpus can be written (a directory
	// where the file was fails every read and write).
	files := []string{tree.dir("cpuset", "pods/left/cpuset.cpus"), tree.dir("cpuset", "pods/right/cpuset.cpus")}
	saved := map[string][]byte{}
	for _, f := range files {
		saved[f], _ = os.ReadFile(f)
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(f, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.writeConfig(movesConfig("left:4:true", "right:4:true", "big:8:false"))
	if res := h.a.Reconcile(); len(res.Errors) == 0 {
		t.Fatal("the failed move was not an error of the reconcile")
	}
	after := h.checkpoint().Assignments
	if _, ok := after["big"]; ok || !after["left"].CPUs.Equals(before["left"].CPUs) || !after["right"].CPUs.Equals(before["right"].CPUs) {
		t.Errorf("checkpoint after the failed move %v, want left and right as before (%v) and no big", after, before)
	}
	if got := tree.file("pods/big", "cpuset.cpus"); got == "0-7" || got == "8-15" {
		t.Errorf("big was given a whole node (%s) while the move failed", got)
	}
	// It stays where it was: its cpuset.mems follows nothing.
	if f, m := h.checkpoint().MemsFollowing, h.a.mem.Following; len(f) != 0 || len(m) != 0 {
		t.Errorf("after the failed move the checkpoint follows %v, the memory %v; want neither", f, m)
	}
	var reasons []string
	for _, e := range h.events() {
		if e.Reason == decide.ReasonMoveFailed || e.Reason == decide.ReasonMoveIncomplete {
			reasons = append(reasons, e.Workload+"/"+e.Reason)
		}
	}
	if !slices.Contains(reasons, "big/MoveIncomplete") || len(reasons) != 2 {
		t.Errorf("move events %v, want MoveFailed on the moved one and MoveIncomplete on big", reasons)
	}
	if n := testutil.ToFloat64(h.a.metrics.Moves); n != 0 {
		t.Errorf("locus_workload_moves_total %v after a failed move, want 0", n)
	}

	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, saved[f], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.reconcile()
	big := h.checkpoint().Assignments["big"].CPUs
	if s := big.String(); s != "0-7" && s != "8-15" {
		t.Fatalf("big: CPUs %s once the move could be made, want a whole node", big)
	}
	if got := tree.file("pods/big", "cpuset.cpus"); got != big.String() {
		t.Errorf("big cpuset.cpus %q, want %s", got, big)
	}
	if n := testutil.ToFloat64(h.a.metrics.Moves); n != 1 {
		t.Errorf("locus_workload_moves_total %v, want 1", n)
	}
}

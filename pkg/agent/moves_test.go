package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// twoNodes16 is 2 nodes of 4 cores of 2 threads: node 0 is CPUs 0-7, node 1
// is 8-15.
var twoNodes16 = fixture.Shape{Name: "2n-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 << 30}

// movesConfig is a HostConfig with the switch on and the workloads named,
// each "name:cpus:movable".
func movesConfig(ws ...string) string {
	cfg := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nmoves: {enabled: true}\nworkloads:\n"
	for _, w := range ws {
		f := strings.Split(w, ":")
		cfg += "- name: " + f[0] + "\n  cgroup: pods/" + f[0] + "\n  qosClass: LS\n  movable: " + f[2] +
			"\n  resources:\n    requests: {cpu: \"" + f[1] + "\", memory: 1Gi}\n    limits: {cpu: \"" + f[1] + "\", memory: 1Gi}\n  annotations: {cpuset-scheduler: \"true\"}\n"
	}
	return cfg
}

// TestMovesAdmitAWorkloadThatNeedsANode: two movable workloads holding half
// of each node of a two-node machine, a third needing a whole node is
// admitted on one node once one of them moved, told by Repinned.
func TestMovesAdmitAWorkloadThatNeedsANode(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-15")
	tree.set("cpuset", "", "cpuset.mems", "0-1")
	tree.mkcg("pods/f", "pods/left", "pods/right", "pods/big")
	// f fills node 0's first half, left its second, right node 1's first: once f
	// is gone, 0-3 and 12-15 are free, four on each node.
	h := newHarness(t, tree, movesConfig("f:4:false", "left:4:true", "right:4:true"), func(o *Options) { o.SysfsRoot = sysfs(t, twoNodes16) })
	h.reconcile()
	h.writeConfig(movesConfig("left:4:true", "right:4:true"))
	h.reconcile()
	before := h.checkpoint().Assignments
	if l, r := before["left"].CPUs.String(), before["right"].CPUs.String(); l != "4-7" || r != "8-11" {
		t.Fatalf("setup: left %s, right %s, want 4-7 and 8-11", l, r)
	}
	h.writeConfig(movesConfig("left:4:true", "right:4:true", "big:8:false"))
	h.reconcile()

	after := h.checkpoint().Assignments
	big := after["big"].CPUs
	if big.Size() != 8 || !(big.String() == "0-7" || big.String() == "8-15") {
		t.Fatalf("big: CPUs %s, want a whole node (all %v)", big, after)
	}
	if got := tree.file("pods/big", "cpuset.cpus"); got != big.String() {
		t.Errorf("big cpuset.cpus %q, want %q", got, big)
	}
	var moved []string
	newMems := map[string]string{}
	for _, name := range []string{"left", "right"} {
		a := after[name]
		if a.CPUs.Size() != 4 || !a.CPUs.Intersection(big).IsEmpty() {
			t.Errorf("%s: CPUs %s beside big's %s", name, a.CPUs, big)
		}
		if !a.CPUs.Equals(before[name].CPUs) {
			moved = append(moved, name)
			mems := "0"
			if a.CPUs.Contains(8) || a.CPUs.Contains(12) {
				mems = "1"
			}
			newMems[name] = mems
			// Widened: the node it left stays allowed while its memory follows.
			if got := tree.file("pods/"+name, "cpuset.mems"); got != "0-1" {
				t.Errorf("moved %s: cpuset.mems %q, want 0-1 (the node left and its new node %s)", name, got, mems)
			}
			if got := tree.file("pods/"+name, "cpuset.cpus"); got != a.CPUs.String() {
				t.Errorf("moved %s: cpuset.cpus %q, want %s", name, got, a.CPUs)
			}
		}
	}
	if len(moved) != 1 {
		t.Fatalf("moved %v, want one of left and right", moved)
	}
	var repinned []string
	for _, e := range h.events() {
		if e.Reason == decide.ReasonRepinned {
			repinned = append(repinned, e.Workload)
			if !strings.Contains(e.Message, "so that big fits") {
				t.Errorf("Repinned: %q", e.Message)
			}
		}
	}
	if !slices.Equal(repinned, moved) {
		t.Errorf("Repinned events for %v, want %v", repinned, moved)
	}
	if n := testutil.ToFloat64(h.a.metrics.Moves); n != 1 {
		t.Errorf("locus_workload_moves_total %v, want 1", n)
	}
	// At rest nothing moves again, and nothing is written.
	if res := h.reconcile(); res.Writes != 0 {
		t.Errorf("next reconcile wrote %d files", res.Writes)
	}
	if f := h.checkpoint().MemsFollowing; len(f) != 1 || f[moved[0]].Wide == nil {
		t.Errorf("checkpoint follows %v, want %s", f, moved[0])
	}
	// Its memory on its new node (v1: in pages), cpuset.mems narrows to it.
	tree.set("memory", "pods/"+moved[0], "memory.numa_stat", "anon=256 N0=0 N1=256\nhierarchical_anon=256 N0=0 N1=256\n")
	if newMems[moved[0]] == "0" {
		tree.set("memory", "pods/"+moved[0], "memory.numa_stat", "anon=256 N0=256 N1=0\nhierarchical_anon=256 N0=256 N1=0\n")
	}
	h.reconcile()
	if got := tree.file("pods/"+moved[0], "cpuset.mems"); got != newMems[moved[0]] {
		t.Errorf("moved %s, its memory followed: cpuset.mems %q, want its new node %s", moved[0], got, newMems[moved[0]])
	}
	if !slices.ContainsFunc(h.events(), func(e eventlog.Event) bool { return e.Reason == decide.ReasonMemsNarrowed && e.Workload == moved[0] }) {
		t.Errorf("no MemsNarrowed event for %s", moved[0])
	}
	if f := h.checkpoint().MemsFollowing; len(f) != 0 {
		t.Errorf("checkpoint still follows %v", f)
	}
}

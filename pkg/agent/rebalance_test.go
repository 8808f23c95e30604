package agent

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/rebalance"
)

// TestRebalanceEvensOutBusyNodes: with moves and rebalancing on, two busy
// movable workloads on node 0 and an idle one on node 1 (six CPUs, leaving
// two free), as the cgroups'
// cpuacct.usage says reconcile after reconcile; one busy workload is moved
// to node 1 once the imbalance held, its cgroup written and told by
// Repinned, and after that nothing moves again while the use stays even.
func TestRebalanceEvensOutBusyNodes(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-15")
	tree.set("cpuset", "", "cpuset.mems", "0-1")
	tree.mkcg("pods/a", "pods/b", "pods/idle")
	cfg := strings.Replace(movesConfig("a:2:true", "b:2:true", "idle:6:false"), "moves: {enabled: true}", "moves: {enabled: true, rebalance: true}", 1)
	h := newHarness(t, tree, cfg, func(o *Options) { o.SysfsRoot = sysfs(t, twoNodes16) })
	clk := &fakeClock{t: time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)}
	h.a.now = clk.now
	h.reconcile()
	before := h.checkpoint().Assignments
	onNode := func(name string) int { return before[name].CPUs.List()[0] / 8 }
	if onNode("a") != onNode("b") {
		t.Fatalf("setup: a %s and b %s on different nodes", before["a"].CPUs, before["b"].CPUs)
	}
	hot := onNode("a")
	if onNode("idle") == hot { // six CPUs do not fit beside a's and b's
		t.Fatalf("setup: idle %s on the busy node %d", before["idle"].CPUs, hot)
	}
	used := map[string]time.Duration{}
	var moved []string
	for i := 1; i <= 20; i++ {
		clk.t = clk.t.Add(rebalance.Default.SampleEvery)
		for name, use := range map[string]float64{"a": 2, "b": 2, "idle": 0} {
			used[name] += time.Duration(use * float64(rebalance.Default.SampleEvery))
			tree.set("cpuacct", "pods/"+name, "cpuacct.usage", strconv.FormatInt(int64(used[name]), 10))
		}
		h.reconcile()
		for _, e := range h.events() {
			if e.Reason == decide.ReasonRepinned && !strings.Contains(strings.Join(moved, " "), e.Workload+"@") {
				moved = append(moved, e.Workload+"@"+strconv.Itoa(i))
				if !strings.Contains(e.Message, "to even out") {
					t.Errorf("Repinned: %q", e.Message)
				}
			}
		}
	}
	if len(moved) != 1 || !strings.HasPrefix(moved[0], "a@") {
		t.Fatalf("moves %v, want a's alone", moved)
	}
	after := h.checkpoint().Assignments["a"].CPUs
	if after.Size() != 2 || after.List()[0]/8 == hot || !after.Intersection(h.checkpoint().Assignments["idle"].CPUs).IsEmpty() {
		t.Fatalf("a on CPUs %s after the move, want the two free CPUs of the other node", after)
	}
	if got := tree.file("pods/a", "cpuset.cpus"); got != after.String() {
		t.Errorf("a's cpuset.cpus %q, want %s", got, after)
	}
	// Widened until its memory has followed (decide's moves_mems.go).
	if got := tree.file("pods/a", "cpuset.mems"); got != "0-1" {
		t.Errorf("a's cpuset.mems %q, want 0-1: the node it left and its new node %d", got, 1-hot)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// twoNodes16 is 2 nodes of 4 cores of 2 threads: node 0 is CPUs 0-7, node
// 1 is 8-15, each core two adjacent ids.
var twoNodes16 = fixture.Shape{Name: "2n-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 << 30}

// TestPlanAllowMoves: the moves come first, one line each, then the
// request's set; -o json lists them; without --allow-moves the holdings
// are only taken CPUs.
func TestPlanAllowMoves(t *testing.T) {
	sys := planTree(t, twoNodes16)
	base := []string{"--sysfs-root", sys, "--cpus", "8", "--holding", "a=0-3", "--holding", "b=8-11"}
	out, err := runPlan(t, append(base, "--movable", "a", "--movable", "b", "--allow-moves")...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a: 0-3 -> 12-15 (node 0 -> 1)\ncpuset:      0-7 (8 CPUs)\n"; !strings.HasPrefix(out, want) {
		t.Fatalf("printed\n%s", out)
	}
	out, err = runPlan(t, append(base, "--movable", "b", "--allow-moves")...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "b: 8-11 -> 4-7 (node 1 -> 0)\ncpuset:      8-15 (8 CPUs)\n"; !strings.HasPrefix(out, want) {
		t.Fatalf("printed\n%s\nwant it to start\n%s", out, want)
	}
	out, err = runPlan(t, append(base, "--movable", "b", "--allow-moves", "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var got planJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.CPUSet != "8-15" || got.Moves == nil || len(*got.Moves) != 1 {
		t.Fatalf("json %s", out)
	}
	if mv := (*got.Moves)[0]; mv.Workload != "b" || mv.From != "8-11" || mv.To != "4-7" || mv.FromNodes[0] != 1 || mv.ToNodes[0] != 0 {
		t.Fatalf("move %+v", mv)
	}
	if !strings.Contains(out, `"moves": [`) || !strings.Contains(out, `"workload": "b"`) {
		t.Fatalf("json keys: %s", out)
	}
	out, err = runPlan(t, append(base, "--movable", "b", "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, `"moves"`) || !strings.Contains(out, `"cpuset": "4-7,12-15"`) {
		t.Fatalf("without --allow-moves: %s", out)
	}
	out, err = runPlan(t, "--sysfs-root", sys, "--cpus", "4", "--holding", "a=0-3", "--movable", "a", "--allow-moves")
	if err != nil || !strings.HasPrefix(out, "moves:       none\ncpuset:      4-7") {
		t.Fatalf("no moves needed: %v\n%s", err, out)
	}
	_, err = runPlan(t, append(base, "--allow-moves")...)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "no movable workload") {
		t.Fatalf("nothing movable: %v", err)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/moveplan"
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

// FuzzPlanHoldings: --holding and --movable are what the caller wrote;
// whatever they say, the holdings accepted are disjoint online CPUs of the
// machine under names given once, or the error names the flag. Each line
// of the input is a --holding, or a --movable when it starts with "+".
func FuzzPlanHoldings(f *testing.F) {
	for _, s := range []string{"a=0-3\n+a", "a=0-3\nb=8-11\n+b", "a=0\na=1", "a=0-1\nb=1-2", "a=0-8191", "=0", "a=", "a", "+c"} {
		f.Add(s)
	}
	fuzzseed.Add(f, func(s string) string { return "a=" + s })
	fuzzseed.Add(f, fuzzseed.Same)
	topo := fixture.MustBuild(twoNodes16)
	f.Fuzz(func(t *testing.T, in string) {
		var m planMoveFlags
		for _, line := range strings.Split(in, "\n") {
			if name, ok := strings.CutPrefix(line, "+"); ok {
				m.movable = append(m.movable, name)
			} else {
				m.holdings = append(m.holdings, line)
			}
		}
		var got []moveplan.Holding
		var err error
		fuzzseed.Timed(t, "planMoveFlags.parse", func() { got, err = m.parse(topo, cpuset.New()) })
		fuzzseed.CheckError(t, err, "--holding", "--movable")
		if err != nil {
			return
		}
		var all cpuset.CPUSet
		names := map[string]bool{}
		for _, h := range got {
			if names[h.Name] || !h.CPUs.Intersection(all).IsEmpty() || !h.CPUs.IsSubsetOf(topo.CPUSet()) || h.CPUs.IsEmpty() {
				t.Fatalf("accepted %+v beside %s", h, all)
			}
			names[h.Name] = true
			all = all.Union(h.CPUs)
		}
	})
}

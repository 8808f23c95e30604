package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --svg draws the machine of --sysfs-root without asking any agent, and
// the running agent's map, owners included, otherwise.
func TestTopologySVG(t *testing.T) {
	sys := fixtureTree(t, "amd-2s-64c-nps4")
	file := filepath.Join(t.TempDir(), "map.svg")
	if out, err := runLocus(t, "topology", "--sysfs-root", sys, "--svg", file); err != nil {
		t.Fatalf("topology --svg: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(raw)
	if !strings.HasPrefix(svg, "<svg ") || strings.Count(svg, `class="numa-node"`) != 8 || strings.Count(svg, `class="core"`) != 128 ||
		strings.Count(svg, `class="cpu idle"`) != 256 || !strings.Contains(svg, "no agent: CPU owners unknown") {
		t.Errorf("the map of the 8-node fixture draws %d nodes, %d cores, %d idle CPUs", strings.Count(svg, `class="numa-node"`),
			strings.Count(svg, `class="core"`), strings.Count(svg, `class="cpu idle"`))
	}

	a := startTopAgent(t)
	out, stderr, code := execLocus(t, a.bin, "topology", "--svg", "-", "--agent-addr", a.addr)
	if code != 0 || strings.Count(out, `class="numa-node"`) != 3 || !strings.Contains(out, `data-kind="exclusive" data-owner="redis"`) {
		t.Errorf("topology --svg - with the agent: status %d, %d nodes, redis's CPUs drawn: %v\n%s", code,
			strings.Count(out, `class="numa-node"`), strings.Contains(out, `data-owner="redis"`), stderr)
	}
	_, stderr, code = execLocus(t, a.bin, "topology", "--svg", filepath.Join(t.TempDir(), "m.svg"), "--agent-addr", freeAddr(t))
	if code != 0 || !strings.Contains(stderr, "drawing the machine without owners") {
		t.Errorf("topology --svg without an agent: status %d, stderr %q", code, stderr)
	}
}

// The table and the map show huge pages on the node that has them, and no
// column or line for them elsewhere.
func TestTopologyHugePagesOnOneNode(t *testing.T) {
	sys := planTree(t, unequalHuge)
	table, err := runLocus(t, "topology", "--sysfs-root", sys)
	if err != nil {
		t.Fatalf("%v\n%s", err, table)
	}
	for _, want := range []string{"MEM FREE  HUGE 2MiB FREE/TOTAL       HUGE 1GiB FREE/TOTAL\n",
		"\n0     0        0-3   4      4        16.0 GiB   12.0 GiB  -                          -\n",
		"\n1     1        4-7   4      4        64.0 GiB   48.0 GiB  512/512 (1.0 GiB/1.0 GiB)  3/4 (3.0 GiB/4.0 GiB)\n"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	svg, err := runLocus(t, "topology", "--sysfs-root", sys, "--svg", "-")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(svg, `class="dim hugepages" data-node="1"`) != 2 || strings.Contains(svg, `class="dim hugepages" data-node="0"`) {
		t.Errorf("the map draws huge pages other than node 1's two pools:\n%s", svg)
	}
}

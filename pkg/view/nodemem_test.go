package view

import (
	"math"
	"testing"
)

func TestNodeHeld(t *testing.T) {
	measured := hugeAgent()
	for i := range measured.Workloads {
		measured.Workloads[i].MemoryHeldByNode = nil
	}
	noMems := hugeAgent()
	for i := range noMems.Workloads {
		noMems.Workloads[i].MemoryHeldByNode, noMems.Workloads[i].MemNodes = nil, nil
	}
	huge := hugeAgent()
	huge.Workloads[0].MemoryHeldByNode[1] = math.MaxUint64 - 1
	for _, tc := range []struct {
		name   string
		snap   *Snapshot
		node   int
		want   uint64
		wantOK bool
	}{
		{"accounted: db and cache's spill", hugeAgent(), 1, 40 << 30, true},
		{"accounted: cache alone", hugeAgent(), 0, 12 << 30, true},
		{"measured on the nodes of cpuset.mems", measured, 1, 32 << 30, true},
		{"measured, cpuset.mems unknown: the CPUs' nodes", noMems, 1, 30 << 30, true},
		{"measured, nothing pinned there", memnodeAgent(), 2, 0, true},
		{"not pinned: shared and BE workloads hold nothing", memnodeAgent(), 1, 0, true},
		{"no agent", machineOnly(unequalHuge), 1, 0, false},
		{"a sum that would wrap", huge, 1, math.MaxUint64, true},
	} {
		got, ok := tc.snap.NodeHeld(tc.node)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: node %d holds %d (%v), want %d (%v)", tc.name, tc.node, got, ok, tc.want, tc.wantOK)
		}
	}
}

// Huge pages are drawn on the nodes that have them, one line a size, and
// nowhere else.
func TestSVGHugePagesOnTheirNode(t *testing.T) {
	for _, snap := range []*Snapshot{machineOnly(unequalHuge), hugeAgent()} {
		lines := map[string][]string{}
		for _, e := range parseSVG(t, SVG(snap)) {
			if hasClass(e, "hugepages") {
				lines[e.attrs["data-node"]] = append(lines[e.attrs["data-node"]], e.attrs["data-size-kib"])
			}
		}
		if len(lines) != 1 || len(lines["1"]) != 2 || lines["1"][0] != "2048" || lines["1"][1] != "1048576" {
			t.Errorf("%s: huge page lines by node %v, want node 1's 2048 and 1048576 only", snap.Source, lines)
		}
	}
	for _, e := range parseSVG(t, SVG(machineOnly(unequalHuge))) {
		if hasClass(e, "mem-held") {
			t.Errorf("no agent, yet memory held is drawn: %v", e.attrs)
		}
	}
}

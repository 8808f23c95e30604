package view

import (
	"fmt"
	"maps"
	"slices"

	"github.com/locus-project/locus/pkg/topology"
)

// Geometry of the map, in pixels. Everything is a whole number so the SVG
// is the same bytes on every machine.
const (
	cellSize  = 18 // one hardware thread
	cellGap   = 2
	corePad   = 2
	coreGap   = 4
	coreCols  = 8 // cores per row inside an L3 group
	groupPad  = 6
	groupHead = 16
	nodePad   = 8
	nodeHead  = 52 // label, memory line and memory bar
	lineH     = 14 // each line under the bar: memory held, each huge page pool
	boxGap    = 10
	charWidth = 7 // of the 11px monospace labels, rounded up
	l3MaxW    = 800
	nodeMaxW  = 1600
	nodeMinW  = 260 // the memory line: "memory 1023.9 GiB used of 1023.9 GiB"
	pageMaxW  = 1700
)

// l3Box is one L3 group's cores inside one node (an L3 shared by two nodes,
// as with sub-NUMA clustering, shows in each).
type l3Box struct {
	id    int // -1: the machine reports no L3
	cores [][]topology.CPU
	w, h  int
}

type nodeBox struct {
	node  topology.NUMANode
	l3s   []*l3Box
	pos   [][2]int
	w, h  int
	label string
	// lines are drawn under the memory bar (memory held, huge pages);
	// head is where the L3 groups start below them.
	lines []nodeLine
	head  int
}

// nodeLine is one line of text under a node's memory bar.
type nodeLine struct {
	class, text string
	sizeKiB     uint64 // a huge page pool's page size; 0 for memory held
	address     string // a device's PCI address
}

type socketBox struct {
	id    int
	nodes []*nodeBox
	pos   [][2]int
	w, h  int
}

// mapLayout places sockets (with their nodes, L3 groups, cores and
// threads), then the memory-only nodes, all measured before drawing.
type mapLayout struct {
	sockets []*socketBox
	memOnly []*nodeBox
	threads int // most threads of one core: every core box is this wide
	coreW   int
	coreH   int
}

func layoutMachine(s *Snapshot) *mapLayout {
	t := s.Topology
	m := &mapLayout{threads: 1}
	byNode := map[int]map[int]map[int][]topology.CPU{} // node → l3 → core → threads
	socketOf := map[int]int{}
	for _, c := range t.CPUs {
		if byNode[c.NUMA] == nil {
			byNode[c.NUMA] = map[int]map[int][]topology.CPU{}
			socketOf[c.NUMA] = c.Socket
		}
		if byNode[c.NUMA][c.L3] == nil {
			byNode[c.NUMA][c.L3] = map[int][]topology.CPU{}
		}
		byNode[c.NUMA][c.L3][c.Core] = append(byNode[c.NUMA][c.L3][c.Core], c)
		m.threads = max(m.threads, len(byNode[c.NUMA][c.L3][c.Core]))
	}
	m.coreW = m.threads*cellSize + (m.threads-1)*cellGap + 2*corePad
	m.coreH = cellSize + 2*corePad
	sockets := map[int]*socketBox{}
	for _, n := range t.Nodes {
		nb := &nodeBox{node: n, lines: nodeLines(s, n)}
		if n.CPUs.IsEmpty() {
			m.memOnly = append(m.memOnly, m.measureNode(nb))
			continue
		}
		for _, l3 := range slices.Sorted(maps.Keys(byNode[n.ID])) {
			g := &l3Box{id: l3}
			cores := byNode[n.ID][l3]
			for _, core := range slices.Sorted(maps.Keys(cores)) {
				g.cores = append(g.cores, cores[core])
			}
			nb.l3s = append(nb.l3s, m.measureL3(g))
		}
		sb := sockets[socketOf[n.ID]]
		if sb == nil {
			sb = &socketBox{id: socketOf[n.ID]}
			sockets[sb.id] = sb
		}
		sb.nodes = append(sb.nodes, m.measureNode(nb))
	}
	for _, id := range slices.Sorted(maps.Keys(sockets)) {
		sb := sockets[id]
		sizes := make([][2]int, len(sb.nodes))
		for i, nb := range sb.nodes {
			sizes[i] = [2]int{nb.w, nb.h}
		}
		var w, h int
		sb.pos, w, h = flow(sizes, nodeMaxW)
		sb.w, sb.h = max(w+2*nodePad, 120), h+groupHead+2*nodePad
		m.sockets = append(m.sockets, sb)
	}
	return m
}

func (m *mapLayout) measureL3(g *l3Box) *l3Box {
	cols := min(len(g.cores), coreCols)
	rows := (len(g.cores) + cols - 1) / cols
	g.w = max(2*groupPad+cols*m.coreW+(cols-1)*coreGap, 2*groupPad+len(l3Label(g))*charWidth)
	g.h = groupHead + groupPad + rows*m.coreH + (rows-1)*coreGap
	return g
}

func (m *mapLayout) measureNode(nb *nodeBox) *nodeBox {
	sizes := make([][2]int, len(nb.l3s))
	for i, g := range nb.l3s {
		sizes[i] = [2]int{g.w, g.h}
	}
	var w, h int
	nb.pos, w, h = flow(sizes, l3MaxW)
	nb.label = nodeLabel(nb.node)
	nb.w = max(w, len(nb.label)*charWidth, nodeMinW)
	for _, l := range nb.lines {
		nb.w = max(nb.w, len([]rune(l.text))*charWidth)
	}
	nb.w += 2 * nodePad
	nb.head = nodeHead + len(nb.lines)*lineH
	nb.h = nb.head + h + nodePad
	if len(nb.l3s) == 0 {
		nb.h = nb.head
	}
	return nb
}

// flow places boxes left to right, wrapping before maxW, and returns their
// positions and the size of the whole.
func flow(sizes [][2]int, maxW int) (pos [][2]int, w, h int) {
	x, y, rowH := 0, 0, 0
	for _, s := range sizes {
		if x > 0 && x+s[0] > maxW {
			x, y, rowH = 0, y+rowH+boxGap, 0
		}
		pos = append(pos, [2]int{x, y})
		w, rowH = max(w, x+s[0]), max(rowH, s[1])
		x += s[0] + boxGap
	}
	return pos, w, y + rowH
}

func l3Label(g *l3Box) string {
	if g.id < 0 {
		return "no L3 · " + plural(len(g.cores), "core")
	}
	return "L3 " + itoa(g.id) + " · " + plural(len(g.cores), "core")
}

func nodeLabel(n topology.NUMANode) string {
	if n.CPUs.IsEmpty() {
		return "NUMA node " + itoa(n.ID) + " · memory only"
	}
	return "NUMA node " + itoa(n.ID) + " · CPUs " + n.CPUs.String()
}

// nodeLines say what pinned workloads hold on the node, when known, each
// huge page pool the node has (a node without one shows none), and the
// node's devices.
func nodeLines(s *Snapshot, n topology.NUMANode) []nodeLine {
	var out []nodeLine
	if b, ok := s.NodeHeld(n.ID); ok {
		out = append(out, nodeLine{class: "mem-held", text: "held by pinned workloads " + topology.HumanBytes(b)})
	}
	for _, h := range s.nodeHugePages(n) {
		out = append(out, nodeLine{class: "hugepages", sizeKiB: h.SizeKiB,
			text: fmt.Sprintf("%s huge pages %d held, %d free of %d (%s)", topology.HugePageSizeName(h.SizeKiB),
				h.Total-min(h.Free, h.Total), h.Free, h.Total, topology.HumanBytes(h.Bytes(h.Total)))})
	}
	return append(out, deviceLines(s.Topology.DevicesOn(n.ID), s.DeviceHolders())...)
}

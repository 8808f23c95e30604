package view

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

const svgMargin = 12

// svgStyle is the map's stylesheet, inline so the map needs nothing else.
const svgStyle = `text{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:11px}
.title{font-size:15px;font-weight:bold}.dim{fill:#666}
.socket-box{fill:#f7f7f7;stroke:#9e9e9e}.node-box{fill:#fff;stroke:#4a6fa5;stroke-width:1.5}
.l3-box{fill:#eef3f8;stroke:#b0bec5}.core-box{fill:#fff;stroke:#cfd8dc}
.cpu{stroke:#546e7a;stroke-width:.5}.cpu.static-burst{fill-opacity:.55}
.busy{fill:#000;fill-opacity:.3;pointer-events:none}
.cpu-id{font-size:8px;text-anchor:middle;pointer-events:none}
.mem-free{fill:#fff;stroke:#90a4ae}.mem-other{fill:#b0bec5}.dist{text-anchor:middle;font-size:10px}`

// SVG draws the machine: sockets, NUMA nodes with their memory and PCI
// devices, L3 groups, cores and their hardware threads, the devices of
// unknown node, and the node distances; with an agent,
// each thread in its owner's colour, shaded by its utilisation, and each
// node's memory split by workload. Elements carry classes and data-*
// attributes (numa-node, core, cpu with data-cpu, data-kind, data-owner,
// device with data-pci)
// for scripts and tests.
func SVG(s *Snapshot) []byte {
	m := layoutMachine(s)
	d := &svgDrawer{s: s, m: m, owners: Owners(s), colors: Colors(s.Workloads), markers: Markers(s.Workloads),
		vcpus: vmThreadOn(s.Workloads)}
	return d.draw()
}

type svgDrawer struct {
	s       *Snapshot
	m       *mapLayout
	owners  map[int]Owner
	colors  map[string]string
	markers map[string]string
	vcpus   map[int]string // CPU: the VM's vCPU holding it
	b       bytes.Buffer
}

func (d *svgDrawer) draw() []byte {
	var body bytes.Buffer
	top := 54
	var sizes [][2]int
	for _, sb := range d.m.sockets {
		sizes = append(sizes, [2]int{sb.w, sb.h})
	}
	pos, w, h := flow(sizes, pageMaxW)
	d.b.Reset()
	for i, sb := range d.m.sockets {
		d.socket(sb, svgMargin+pos[i][0], top+pos[i][1])
	}
	y := top + h
	if len(d.m.memOnly) > 0 {
		sizes = sizes[:0]
		for _, nb := range d.m.memOnly {
			sizes = append(sizes, [2]int{nb.w, nb.h})
		}
		mpos, mw, mh := flow(sizes, pageMaxW)
		for i, nb := range d.m.memOnly {
			d.node(nb, svgMargin+mpos[i][0], y+boxGap+mpos[i][1])
		}
		w, y = max(w, mw), y+boxGap+mh
	}
	if uw, uh := d.unknownDevices(svgMargin, y+boxGap); uh > 0 {
		w, y = max(w, uw), y+boxGap+uh
	}
	dw, dh := d.distances(svgMargin, y+boxGap)
	lw, lh := d.legend(svgMargin+dw+2*boxGap, y+boxGap)
	w = max(w, dw+2*boxGap+lw)
	y += boxGap + max(dh, lh)
	body.Write(d.b.Bytes())

	width, height := w+2*svgMargin, y+svgMargin
	d.b.Reset()
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" class="locus-map" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&d.b, "<style>%s</style>\n", svgStyle)
	fmt.Fprintf(&d.b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", width, height)
	fmt.Fprintf(&d.b, `<text class="title" x="%d" y="24">%s</text>`+"\n", svgMargin, esc(machineSummary(d.s.Topology)))
	fmt.Fprintf(&d.b, `<text class="dim" x="%d" y="42">%s</text>`+"\n", svgMargin, esc(d.subtitle()))
	d.b.Write(body.Bytes())
	d.b.WriteString("</svg>\n")
	return append([]byte(nil), d.b.Bytes()...)
}

func (d *svgDrawer) subtitle() string {
	var parts []string
	if d.s.Source != "" {
		parts = append(parts, d.s.Source)
	}
	if !d.s.Time.IsZero() {
		parts = append(parts, "as of "+d.s.Time.UTC().Format(time.DateTime)+" UTC")
	}
	if !d.s.Agent {
		parts = append(parts, "no agent: CPU owners unknown")
	}
	if d.s.Note != "" {
		parts = append(parts, d.s.Note)
	}
	return strings.Join(parts, " · ")
}

func (d *svgDrawer) socket(sb *socketBox, x, y int) {
	fmt.Fprintf(&d.b, `<g class="socket" data-socket="%d" transform="translate(%d,%d)">`+"\n", sb.id, x, y)
	fmt.Fprintf(&d.b, `<rect class="socket-box" width="%d" height="%d" rx="8"/><text x="%d" y="13">socket %d</text>`+"\n",
		sb.w, sb.h, nodePad, sb.id)
	for i, nb := range sb.nodes {
		d.node(nb, nodePad+sb.pos[i][0], groupHead+nodePad+sb.pos[i][1])
	}
	d.b.WriteString("</g>\n")
}

func (d *svgDrawer) node(nb *nodeBox, x, y int) {
	n := nb.node
	fmt.Fprintf(&d.b, `<g class="numa-node" data-node="%d" transform="translate(%d,%d)">`+"\n", n.ID, x, y)
	fmt.Fprintf(&d.b, `<rect class="node-box" width="%d" height="%d" rx="6"/><text x="%d" y="16">%s</text>`+"\n",
		nb.w, nb.h, nodePad, esc(nb.label))
	mem := d.s.nodeMemory(n)
	used := mem.Total - min(mem.Free, mem.Total)
	fmt.Fprintf(&d.b, `<text class="dim" x="%d" y="31">memory %s used of %s</text>`+"\n", nodePad,
		topology.HumanBytes(used), topology.HumanBytes(mem.Total))
	d.memoryBar(n.ID, mem, nodePad, 36, nb.w-2*nodePad)
	for i, l := range nb.lines {
		fmt.Fprintf(&d.b, `<text class="dim %s" data-node="%d"%s x="%d" y="%d">%s</text>`+"\n",
			l.class, n.ID, l.attrs(), nodePad, nodeHead+i*lineH+2, esc(l.text))
	}
	for i, g := range nb.l3s {
		d.l3(g, nodePad+nb.pos[i][0], nb.head+nb.pos[i][1])
	}
	d.b.WriteString("</g>\n")
}

// memoryBar splits a node's memory: each workload's share in its colour,
// the rest of the used memory grey, the free memory white.
func (d *svgDrawer) memoryBar(node int, mem NodeMemory, x, y, w int) {
	fmt.Fprintf(&d.b, `<g class="mem" data-node="%d"><rect class="mem-free" x="%d" y="%d" width="%d" height="8"/>`, node, x, y, w)
	if mem.Total == 0 {
		d.b.WriteString("</g>\n")
		return
	}
	used := mem.Total - min(mem.Free, mem.Total)
	scale := func(b uint64) int { return int(b * uint64(w) / mem.Total) }
	at, owned := x, uint64(0)
	for _, name := range sortedNames(d.s.Workloads) {
		b := workloadNamed(d.s.Workloads, name).MemoryByNode[node]
		if b == 0 || owned+b > used {
			continue
		}
		owned += b
		fmt.Fprintf(&d.b, `<rect class="mem-workload" data-owner="%s" x="%d" y="%d" width="%d" height="8" fill="%s"><title>%s: %s</title></rect>`,
			esc(name), at, y, scale(b), d.colors[name], esc(name), topology.HumanBytes(b))
		at += scale(b)
	}
	fmt.Fprintf(&d.b, `<rect class="mem-other" x="%d" y="%d" width="%d" height="8"><title>other: %s</title></rect></g>`+"\n",
		at, y, max(scale(used)-(at-x), 0), topology.HumanBytes(used-owned))
}

func (d *svgDrawer) l3(g *l3Box, x, y int) {
	fmt.Fprintf(&d.b, `<g class="l3" data-l3="%d" transform="translate(%d,%d)">`, g.id, x, y)
	fmt.Fprintf(&d.b, `<rect class="l3-box" width="%d" height="%d" rx="4"/><text class="dim" x="%d" y="12">%s</text>`+"\n",
		g.w, g.h, groupPad, esc(l3Label(g)))
	for i, threads := range g.cores {
		cx := groupPad + i%coreCols*(d.m.coreW+coreGap)
		cy := groupHead + i/coreCols*(d.m.coreH+coreGap)
		fmt.Fprintf(&d.b, `<g class="core" data-core="%d"><rect class="core-box" x="%d" y="%d" width="%d" height="%d" rx="3"/>`,
			threads[0].Core, cx, cy, d.m.coreW, d.m.coreH)
		for j, c := range threads {
			d.cpu(c, cx+corePad+j*(cellSize+cellGap), cy+corePad)
		}
		d.b.WriteString("</g>\n")
	}
	d.b.WriteString("</g>\n")
}

func (d *svgDrawer) cpu(c topology.CPU, x, y int) {
	o := d.owners[c.ID]
	fill := ownerColor(o, d.colors)
	tip := fmt.Sprintf("CPU %d · core %d · %s", c.ID, c.Core, o.Kind)
	if o.Workload != "" {
		tip += ": " + o.Workload
	}
	if th, ok := d.vcpus[c.ID]; ok {
		tip += " · " + th
	}
	busy, known := d.s.CPUBusy[c.ID]
	if known {
		tip += fmt.Sprintf(" · %.0f%% busy", busy*100)
	}
	fmt.Fprintf(&d.b, `<rect class="cpu %s" id="cpu-%d" data-cpu="%d" data-kind="%s" data-owner="%s" x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s</title></rect>`,
		o.Kind, c.ID, c.ID, o.Kind, esc(o.Workload), x, y, cellSize, cellSize, fill, esc(tip))
	if h := busyLevel(busy) * cellSize / 8; known && h > 0 {
		fmt.Fprintf(&d.b, `<rect class="busy" x="%d" y="%d" width="%d" height="%d"/>`, x, y+cellSize-h, cellSize, h)
	}
	fmt.Fprintf(&d.b, `<text class="cpu-id" x="%d" y="%d" fill="%s">%d</text>`, x+cellSize/2, y+cellSize/2+3, textOn(fill), c.ID)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

func esc(s string) string { return xmlEscaper.Replace(s) }

package view

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

const (
	distCellW = 30
	distCellH = 18
	legendRow = 17
)

// distances draws the SLIT matrix as `numactl -H` prints it, each cell
// shaded by how far the node is; it returns the box's size.
func (d *svgDrawer) distances(x, y int) (w, h int) {
	t := d.s.Topology
	n := len(t.Nodes)
	title := "NUMA distances"
	w = max(2*groupPad+(n+1)*distCellW, 2*groupPad+len(title)*charWidth)
	h = groupHead + groupPad + (n+1)*distCellH
	far := 10
	for _, nd := range t.Nodes {
		for _, v := range nd.Distances {
			far = max(far, v)
		}
	}
	fmt.Fprintf(&d.b, `<g class="distances" transform="translate(%d,%d)"><rect class="l3-box" width="%d" height="%d" rx="4"/><text x="%d" y="12">%s</text>`+"\n",
		x, y, w, h, groupPad, title)
	top := groupHead + groupPad
	for i, nd := range t.Nodes {
		cx := groupPad + (i+1)*distCellW + distCellW/2
		fmt.Fprintf(&d.b, `<text class="dist dim" x="%d" y="%d">%d</text>`, cx, top+13, nd.ID)
		fmt.Fprintf(&d.b, `<text class="dist dim" x="%d" y="%d">%d</text>`, groupPad+distCellW/2, top+(i+1)*distCellH+13, nd.ID)
	}
	for i, from := range t.Nodes {
		for j, v := range from.Distances {
			shade := 255 - (v-10)*120/max(far-10, 1)
			if v < 10 {
				shade = 255
			}
			cx, cy := groupPad+(j+1)*distCellW, top+(i+1)*distCellH
			fmt.Fprintf(&d.b, `<rect class="dist-cell" x="%d" y="%d" width="%d" height="%d" fill="#%02x%02xff" stroke="#cfd8dc"/>`,
				cx, cy, distCellW, distCellH, shade, shade)
			fmt.Fprintf(&d.b, `<text class="dist" x="%d" y="%d">%d</text>`, cx+distCellW/2, cy+13, v)
		}
		d.b.WriteString("\n")
	}
	d.b.WriteString("</g>\n")
	return w, h
}

// legend names the colours: the pools, then each workload with its CPUs,
// nodes, memory and local ratio.
func (d *svgDrawer) legend(x, y int) (w, h int) {
	type entry struct {
		fill, text string
		kind       Kind
		owner      string
	}
	var entries []entry
	if d.s.Agent {
		for _, k := range []Kind{KindShared, KindBE, KindReserved, KindIdle} {
			entries = append(entries, entry{fill: kindColors[k], text: kindText[k], kind: k})
		}
	} else {
		entries = append(entries, entry{fill: kindColors[KindIdle], text: "CPU (no agent: owner unknown)", kind: KindIdle})
	}
	for _, name := range sortedNames(d.s.Workloads) {
		w := workloadNamed(d.s.Workloads, name)
		entries = append(entries, entry{fill: d.colors[name], text: workloadText(w, d.markers[name]), owner: name})
	}
	entries = append(entries, entry{fill: "#000", text: "shade: utilisation of the CPU"})
	w = 2*groupPad + len("Legend")*charWidth
	for _, e := range entries {
		w = max(w, 2*groupPad+22+len([]rune(e.text))*charWidth)
	}
	h = groupHead + groupPad + len(entries)*legendRow
	fmt.Fprintf(&d.b, `<g class="legend" transform="translate(%d,%d)"><rect class="l3-box" width="%d" height="%d" rx="4"/><text x="%d" y="12">Legend</text>`+"\n",
		x, y, w, h, groupPad)
	for i, e := range entries {
		ry := groupHead + groupPad + i*legendRow
		opacity := ""
		if e.fill == "#000" {
			opacity = ` fill-opacity=".3"`
		}
		fmt.Fprintf(&d.b, `<g class="legend-entry" data-kind="%s" data-owner="%s"><rect x="%d" y="%d" width="14" height="12" fill="%s"%s stroke="#546e7a" stroke-width=".5"/><text x="%d" y="%d">%s</text></g>`+"\n",
			e.kind, esc(e.owner), groupPad, ry, e.fill, opacity, groupPad+22, ry+10, esc(e.text))
	}
	d.b.WriteString("</g>\n")
	return w, h
}

var kindText = map[Kind]string{KindShared: "shared pool", KindBE: "BE pool (narrower than shared)",
	KindReserved: "reserved CPUs", KindIdle: "idle: isolated, or no pool"}

// workloadText is "A redis · LS · exclusive CPUs 2-3 · node 0 · 1.2 GiB, 92% local".
func workloadText(w Workload, marker string) string {
	parts := []string{marker + " " + w.Name}
	if w.QOSClass != "" {
		parts = append(parts, w.QOSClass)
	}
	if w.Pool != "" {
		parts = append(parts, w.Pool+" CPUs "+orDash(w.CPUs))
	}
	if len(w.NUMANodes) > 0 {
		parts = append(parts, "node "+ints(w.NUMANodes))
	}
	if w.VM != nil {
		parts = append(parts, "VM "+w.VM.Domain+": "+w.threadsText())
	}
	if m, ok := w.MemoryTotal(); ok {
		mem := topology.HumanBytes(m)
		if r, ok := w.LocalRatio(); ok {
			mem += fmt.Sprintf(", %d%% local", r)
		}
		parts = append(parts, mem)
	}
	return strings.Join(parts, " · ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

package view

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// kindGlyphs mark CPUs that no single workload owns; a workload's CPUs show
// its marker (lower case when static-burst).
var kindGlyphs = map[Kind]string{KindShared: "=", KindBE: "~", KindReserved: "#", KindIdle: "."}

// nodeSection draws the NUMA nodes in at most budget lines: a label line
// and rows of CPU cells with their utilisation per node when that fits,
// else one line per node, else as many nodes as fit.
func nodeSection(s *Snapshot, width, budget int) []Line {
	if budget < 1 || len(s.Topology.Nodes) == 0 {
		return nil
	}
	d := nodeDrawer{s: s, owners: Owners(s), markers: Markers(s.Workloads)}
	var full []Line
	for _, n := range s.Topology.Nodes {
		full = append(full, d.full(n, width)...)
	}
	if len(full) <= budget {
		return full
	}
	var compact []Line
	for _, n := range s.Topology.Nodes {
		compact = append(compact, d.compact(n, width))
	}
	if len(compact) <= budget {
		return compact
	}
	more := len(compact) - (budget - 1)
	return append(compact[:budget-1], Line{styled(fmt.Sprintf("… %d more NUMA nodes (a larger terminal shows them)", more), RoleDim)})
}

type nodeDrawer struct {
	s       *Snapshot
	owners  map[int]Owner
	markers map[string]string
}

// full is the label line, then pairs of rows: owners, then utilisation.
func (d nodeDrawer) full(n topology.NUMANode, width int) []Line {
	cpus := n.CPUs.List()
	label := fmt.Sprintf("node %d · ", n.ID)
	if len(cpus) == 0 {
		label += "memory only"
	} else {
		label += "CPUs " + n.CPUs.String()
	}
	out := []Line{{styled(label, RoleHeader), text(" · busy " + d.busy(cpus) + " · mem " + d.memory(n) + " used" + d.held(n))}}
	if huge := d.hugePages(n); huge != "" {
		out = append(out, Line{text("  huge pages " + huge)})
	}
	room := width - 2
	gaps := len(cpus) > 8 && len(cpus)+(len(cpus)-1)/8 <= room
	perRow := len(cpus)
	if len(cpus) > room {
		perRow = max(room, 1)
		if room >= 8 {
			perRow = room / 8 * 8 // rows break between groups of eight
		}
	}
	for start := 0; start < len(cpus); start += perRow {
		row := cpus[start:min(start+perRow, len(cpus))]
		own, use := Line{text("  ")}, Line{text("  ")}
		for i, id := range row {
			if gaps && i > 0 && i%8 == 0 {
				own, use = append(own, text(" ")), append(use, text(" "))
			}
			own = append(own, d.cell(d.owners[id]))
			use = append(use, busySpan(d.s.CPUBusy, id))
		}
		out = append(out, own, use)
	}
	return out
}

// compact is one line per node: its CPUs (several to a cell when they do
// not fit, the most specific owner showing), its busy share and memory,
// and the free pages of each huge page pool it has.
func (d nodeDrawer) compact(n topology.NUMANode, width int) Line {
	cpus := n.CPUs.List()
	prefix := fmt.Sprintf("n%d ", n.ID)
	suffix := fmt.Sprintf(" %s %s", d.busy(cpus), d.memory(n))
	if pools := d.s.nodeHugePages(n); len(pools) > 0 {
		suffix += " huge"
		for _, h := range pools {
			suffix += fmt.Sprintf(" %s:%d", topology.HugePageSizeName(h.SizeKiB), h.Free)
		}
		suffix += " free"
	}
	l := Line{styled(prefix, RoleHeader)}
	room := width - len(prefix) - len([]rune(suffix))
	if len(cpus) == 0 {
		l = append(l, styled("memory only", RoleDim))
	} else if room > 0 {
		per := (len(cpus) + room - 1) / room
		for start := 0; start < len(cpus); start += per {
			best := Owner{Kind: KindIdle}
			for _, id := range cpus[start:min(start+per, len(cpus))] {
				if o := d.owners[id]; kindRank(o.Kind) < kindRank(best.Kind) {
					best = o
				}
			}
			l = append(l, d.cell(best))
		}
	}
	return append(l, text(suffix))
}

func kindRank(k Kind) int {
	for i, o := range []Kind{KindExclusive, KindBurst, KindReserved, KindBE, KindShared, KindIdle} {
		if o == k {
			return i
		}
	}
	return len(Kinds)
}

func (d nodeDrawer) cell(o Owner) Span {
	g := kindGlyphs[o.Kind]
	if o.Workload != "" {
		g = d.markers[o.Workload]
		if o.Kind == KindBurst {
			g = strings.ToLower(g)
		}
	}
	if g == "" {
		g = "?"
	}
	return Span{Text: g, Style: Style{Role: RoleCell, Kind: o.Kind, Workload: o.Workload}}
}

func busySpan(busy map[int]float64, id int) Span {
	b, ok := busy[id]
	if !ok {
		return Span{Text: "-", Style: Style{Role: RoleBusy, Level: -1}}
	}
	l := busyLevel(b)
	return Span{Text: string(busyGlyphs[l]), Style: Style{Role: RoleBusy, Level: l}}
}

// busy is the mean utilisation of the CPUs whose utilisation is known.
func (d nodeDrawer) busy(cpus []int) string {
	var sum float64
	n := 0
	for _, id := range cpus {
		if b, ok := d.s.CPUBusy[id]; ok {
			sum += b
			n++
		}
	}
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*sum/float64(n))
}

func (d nodeDrawer) memory(n topology.NUMANode) string {
	m := d.s.nodeMemory(n)
	return shortBytes(m.Total-min(m.Free, m.Total)) + "/" + shortBytes(m.Total)
}

// held is " · held 1.5G" when what pinned workloads hold on the node is
// known.
func (d nodeDrawer) held(n topology.NUMANode) string {
	if b, ok := d.s.NodeHeld(n.ID); ok {
		return " · held " + shortBytes(b)
	}
	return ""
}

// hugePages is "2MiB 128 held 384 free · 1GiB 0 held 4 free", the pools
// the node has; "" for a node without one, which shows no line for them.
func (d nodeDrawer) hugePages(n topology.NUMANode) string {
	var parts []string
	for _, h := range d.s.nodeHugePages(n) {
		parts = append(parts, fmt.Sprintf("%s %d held %d free", topology.HugePageSizeName(h.SizeKiB), h.Total-min(h.Free, h.Total), h.Free))
	}
	return strings.Join(parts, " · ")
}

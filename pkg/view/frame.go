package view

import (
	"fmt"
	"strings"
	"time"
)

// SortKey is the column the workload table is sorted by.
type SortKey string

// The sort keys and the key that picks each in `locus top`.
const (
	SortName   SortKey = "name"  // n
	SortCPU    SortKey = "cpu"   // c
	SortMemory SortKey = "mem"   // m
	SortLocal  SortKey = "local" // l
)

// FrameOptions are the terminal and what the user asked for.
type FrameOptions struct {
	Width, Height int
	Sort          SortKey // "" sorts by name
	Reverse       bool
	Filter        string // workloads whose name contains it
	EditingFilter bool   // the filter is being typed
	Paused        bool
	Static        bool           // printed once (locus top --once): no key help
	Err           string         // why the last refresh failed, if it did
	Location      *time.Location // for clocks; nil is UTC
}

// Smallest terminal a frame is drawn in; below it the frame is one line
// saying so.
const (
	MinWidth  = 40
	MinHeight = 8
)

// Frame draws a snapshot as at most o.Height lines of at most o.Width
// cells: a header, a bar of CPUs per NUMA node coloured by owner with their
// utilisation, and one row per workload. The nodes give way first when the
// terminal is small: full bars, then one line per node, then some nodes.
func Frame(s *Snapshot, o FrameOptions) []Line {
	if o.Width < MinWidth || o.Height < MinHeight {
		msg := fmt.Sprintf("%dx%d too small: needs %dx%d", o.Width, o.Height, MinWidth, MinHeight)
		return []Line{Line{styled(msg, RoleWarn)}.clip(max(o.Width, 0))}
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	head := header(s, o)
	foot := footer(o)
	rows := filterSort(s.Workloads, o)
	room := o.Height - len(head) - len(foot)
	// The table keeps its title and a few rows; the nodes get the rest.
	tableMin := 1 + max(min(len(rows), 4), 1) // a row, or the line saying there is none
	// The VMs' threads go under the table when the table keeps its
	// minimum beside them.
	vms := vmLines(rows, o.Width)
	if len(vms) > 0 && room-tableMin-1-len(vms) < 0 {
		vms = nil
	}
	nodes := nodeSection(s, o.Width, room-tableMin-1-len(vms))
	body := nodes
	if len(body) > 0 {
		body = append(body, Line{})
	}
	body = append(body, table(s, rows, o, room-len(body)-len(vms))...)
	body = append(body, vms...)
	out := append(append(head, body...), foot...)
	for i := range out {
		out[i] = out[i].clip(o.Width).merged()
	}
	return out
}

// Plain is a frame's text, one line each, for `locus top --once`.
func Plain(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

func header(s *Snapshot, o FrameOptions) []Line {
	title := "locus top"
	if s.Source != "" {
		title += " · " + s.Source
	}
	if !s.Time.IsZero() {
		title += " · " + s.Time.In(o.Location).Format("15:04:05")
	}
	state := "sort " + string(sortKey(o))
	if o.Reverse != defaultDescending(sortKey(o)) {
		state += " ↓"
	} else {
		state += " ↑"
	}
	if o.Filter != "" {
		state += " · filter “" + o.Filter + "”"
	}
	if o.Paused {
		state += " · PAUSED"
	}
	// The state matters more than the clock: the title gives way.
	if room := o.Width - len([]rune(state)) - 1; len([]rune(title)) > room {
		title = string([]rune(title)[:max(room-1, 0)]) + "…"
	}
	gap := o.Width - len([]rune(title)) - len([]rune(state))
	first := Line{styled(title+strings.Repeat(" ", max(gap, 1))+state, RoleTitle)}
	out := []Line{first, {text(machineSummary(s.Topology))}}
	// On a short terminal the CPU counts give their line to the nodes.
	if counts := kindCounts(s); counts != "" && o.Height >= 16 {
		out = append(out, Line{text("CPUs: " + counts)})
	}
	if o.Err != "" {
		out = append(out, Line{styled(o.Err, RoleWarn)})
	} else if s.Note != "" {
		out = append(out, Line{styled(s.Note, RoleDim)})
	}
	return out
}

// kindCounts is "exclusive 4 · shared 27 · reserved 1", kinds with CPUs only.
func kindCounts(s *Snapshot) string {
	if !s.Agent {
		return ""
	}
	total := map[Kind]int{}
	for _, counts := range NodeCPUs(s) {
		for k, n := range counts {
			total[k] += n
		}
	}
	var parts []string
	for _, k := range Kinds {
		if total[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, total[k]))
		}
	}
	return strings.Join(parts, " · ")
}

func footer(o FrameOptions) []Line {
	if o.Static {
		return nil
	}
	if o.EditingFilter {
		return []Line{{styled("filter: ", RoleTitle), text(o.Filter + "▏"), styled("  enter keeps it · esc clears it", RoleDim)}}
	}
	keys := "n name · c cpu · m mem · l local · r reverse · / filter · space pause · q quit"
	if o.Width < 80 {
		keys = "n c m l sort · r rev · / filter · space pause · q"
	}
	return []Line{{styled(keys, RoleDim)}}
}

func sortKey(o FrameOptions) SortKey {
	switch o.Sort {
	case SortCPU, SortMemory, SortLocal:
		return o.Sort
	}
	return SortName
}

// defaultDescending: the biggest users first; names and local ratios
// (the worst first) ascending.
func defaultDescending(k SortKey) bool { return k == SortCPU || k == SortMemory }

package view

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// filterSort is the workloads the table shows, in order. Unknown values
// sort last whatever the direction; ties go by name.
func filterSort(ws []Workload, o FrameOptions) []Workload {
	var out []Workload
	for _, w := range ws {
		if o.Filter == "" || strings.Contains(strings.ToLower(w.Name), strings.ToLower(o.Filter)) {
			out = append(out, w)
		}
	}
	key := sortKey(o)
	desc := defaultDescending(key) != o.Reverse
	value := func(w Workload) (float64, bool) {
		switch key {
		case SortCPU:
			if w.CPUUsage == nil {
				return 0, false
			}
			return *w.CPUUsage, true
		case SortMemory:
			m, ok := w.MemoryTotal()
			return float64(m), ok
		case SortLocal:
			r, ok := w.LocalRatio()
			return float64(r), ok
		}
		return 0, true
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		va, oka := value(a)
		vb, okb := value(b)
		switch {
		case oka != okb:
			return oka
		case key == SortName:
			return (a.Name < b.Name) != desc
		case va != vb:
			return (va < vb) != desc
		}
		return a.Name < b.Name
	})
	return out
}

// column is one column of the workload table; columns of lower priority
// are dropped first when the terminal is narrow.
type column struct {
	title string
	key   SortKey
	right bool
	prio  int
	width int
	cell  func(w Workload) Span
}

func columns(ws []Workload, loc *time.Location) []column {
	cols := []column{
		{title: "NAME", key: SortName, prio: 100, cell: func(w Workload) Span {
			if len(w.Problems) > 0 {
				return styled(w.Name+" !", RoleWarn)
			}
			return text(w.Name)
		}},
		{title: "QOS", prio: 60, cell: func(w Workload) Span { return orDim(w.QOSClass) }},
		{title: "POOL", prio: 45, cell: func(w Workload) Span { return orDim(w.Pool) }},
		{title: "CPUS", prio: 90, cell: func(w Workload) Span { return orDim(w.CPUs) }},
		{title: "NUMA", prio: 85, cell: func(w Workload) Span { return orDim(ints(w.NUMANodes)) }},
		{title: "CPU%", key: SortCPU, right: true, prio: 80, cell: func(w Workload) Span {
			if w.CPUUsage == nil {
				return orDim("")
			}
			return text(strconv.FormatFloat(*w.CPUUsage*100, 'f', 1, 64))
		}},
		{title: "MEM", key: SortMemory, right: true, prio: 70, cell: func(w Workload) Span {
			if m, ok := w.MemoryTotal(); ok {
				return text(shortBytes(m))
			}
			return orDim("")
		}},
		{title: "LOCAL", key: SortLocal, right: true, prio: 65, cell: func(w Workload) Span {
			if r, ok := w.LocalRatio(); ok {
				return text(strconv.Itoa(r) + "%")
			}
			return orDim("")
		}},
		{title: "MEM BY NODE", prio: 30, cell: func(w Workload) Span { return orDim(byNode(w.MemoryByNode)) }},
		{title: "LAST MIGRATION", prio: 35, cell: func(w Workload) Span { return orDim(migration(w.Migration, loc)) }},
		{title: "PROBLEMS", prio: 10, cell: func(w Workload) Span {
			if len(w.Problems) == 0 {
				return orDim("")
			}
			return styled(strings.Join(w.Problems, "; "), RoleWarn)
		}},
	}
	limits := map[string][2]int{"NAME": {4, 24}, "CPUS": {4, 16}, "NUMA": {4, 8}, "MEM BY NODE": {11, 32},
		"LAST MIGRATION": {14, 32}, "PROBLEMS": {8, 60}}
	for i := range cols {
		c := &cols[i]
		c.width = utf8.RuneCountInString(c.title)
		empty := true
		for _, w := range ws {
			sp := c.cell(w)
			c.width = max(c.width, utf8.RuneCountInString(sp.Text))
			empty = empty && sp.Style.Role == RoleDim
		}
		if empty && c.prio < 100 {
			c.prio -= 100 // nothing to show: the first to go
		}
		if l, ok := limits[c.title]; ok {
			c.width = min(max(c.width, l[0]), l[1])
		}
	}
	return cols
}

// table is the title row and as many workload rows as fit in height.
func table(s *Snapshot, rows []Workload, o FrameOptions, height int) []Line {
	if height <= 0 {
		return nil
	}
	cols := columns(rows, o.Location)
	// Two cells for the marker, two between columns.
	for used := 2 + fitWidth(cols); used > o.Width; used = 2 + fitWidth(cols) {
		low := 0
		for i, c := range cols {
			if c.prio < cols[low].prio {
				low = i
			}
		}
		cols = slices.Delete(cols, low, low+1)
	}
	key := sortKey(o)
	title := Line{text("  ")}
	for i, c := range cols {
		role := RoleHeader
		if c.key == key {
			role = RoleSorted
		}
		title = append(title, styled(sep(i)+pad(c.title, c.width, c.right), role))
	}
	out := []Line{title}
	markers := Markers(s.Workloads)
	shown := rows
	if len(rows) > height-1 {
		shown = rows[:max(height-2, 0)]
	}
	for _, w := range shown {
		l := Line{{Text: markers[w.Name], Style: Style{Role: RoleMarker, Workload: w.Name}}, text(" ")}
		for i, c := range cols {
			sp := c.cell(w)
			l = append(l, text(sep(i)), Span{Text: pad(sp.Text, c.width, c.right), Style: sp.Style})
		}
		out = append(out, l)
	}
	switch {
	case len(shown) < len(rows):
		out = append(out, Line{styled(fmt.Sprintf("  … %d more (/ filters)", len(rows)-len(shown)), RoleDim)})
	case len(s.Workloads) == 0 && !s.Agent:
		out = append(out, Line{styled("  no agent: no workloads to show", RoleDim)})
	case len(rows) == 0:
		out = append(out, Line{styled("  no workload matches", RoleDim)})
	}
	return out[:min(len(out), height)]
}

func fitWidth(cols []column) int {
	n := 0
	for i, c := range cols {
		n += len(sep(i)) + c.width
	}
	return n
}

func sep(i int) string {
	if i == 0 {
		return ""
	}
	return "  "
}

func orDim(s string) Span {
	if s == "" {
		return styled("-", RoleDim)
	}
	return text(s)
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// byNode is "0:1.1G 1:96M", nodes in order.
func byNode(m map[int]uint64) string {
	nodes := make([]int, 0, len(m))
	for n := range m {
		nodes = append(nodes, n)
	}
	sort.Ints(nodes)
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = strconv.Itoa(n) + ":" + shortBytes(m[n])
	}
	return strings.Join(parts, " ")
}

// migration is "10:42 completed 1000p".
func migration(m *Migration, loc *time.Location) string {
	if m == nil {
		return ""
	}
	s := m.Time.In(loc).Format("15:04") + " " + m.Result()
	if m.PagesMigrated > 0 {
		s += " " + strconv.FormatUint(m.PagesMigrated, 10) + "p"
	}
	return s
}

// shortBytes is a size in at most five cells: "512B", "9.5K", "96M", "1.2G".
func shortBytes(b uint64) string {
	units := "KMGTP"
	if b < 1024 {
		return strconv.FormatUint(b, 10) + "B"
	}
	v := float64(b)
	i := -1
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v < 9.95 {
		return strconv.FormatFloat(v, 'f', 1, 64) + units[i:i+1]
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + units[i:i+1]
}

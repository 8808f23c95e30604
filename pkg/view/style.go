package view

import (
	"strings"
	"unicode/utf8"
)

// Role is what a span of a frame is, for the terminal to colour it.
type Role int

// The roles a span can have.
const (
	RoleText   Role = iota
	RoleTitle       // the first line
	RoleHeader      // column titles
	RoleSorted      // the title of the column the table is sorted by
	RoleDim         // hints and unknown values
	RoleWarn        // errors and problems
	RoleCell        // one CPU (or a group of CPUs) coloured by its owner
	RoleMarker      // a workload's letter, in its colour
	RoleBusy        // a CPU's utilisation glyph, coloured by Level
)

// Style is how a span looks: its role and what the role needs.
type Style struct {
	Role     Role
	Kind     Kind   // RoleCell
	Workload string // RoleCell (exclusive, static-burst), RoleMarker
	Level    int    // RoleBusy: 0–8, -1 unknown
}

// Span is text in one style. Text is single-width runes only.
type Span struct {
	Text  string
	Style Style
}

// Line is one terminal row.
type Line []Span

// String is the line's text without styles.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

// clip cuts the line to at most w cells.
func (l Line) clip(w int) Line {
	var out Line
	for _, s := range l {
		n := utf8.RuneCountInString(s.Text)
		if n <= w {
			out = append(out, s)
			w -= n
			continue
		}
		if w > 0 {
			out = append(out, Span{Text: string([]rune(s.Text)[:w]), Style: s.Style})
		}
		break
	}
	return out
}

// merged joins neighbouring spans of one style, so a renderer styles runs,
// not single cells.
func (l Line) merged() Line {
	var out Line
	for _, s := range l {
		if n := len(out); n > 0 && out[n-1].Style == s.Style {
			out[n-1].Text += s.Text
			continue
		}
		out = append(out, s)
	}
	return out
}

func text(s string) Span           { return Span{Text: s} }
func styled(s string, r Role) Span { return Span{Text: s, Style: Style{Role: r}} }

// Colors are a style's foreground and background ("#rrggbb", "" for the
// terminal's default), with colors the workload colours (see Colors).
func (s Style) Colors(colors map[string]string) (fg, bg string) {
	switch s.Role {
	case RoleCell:
		bg = ownerColor(Owner{Kind: s.Kind, Workload: s.Workload}, colors)
		return textOn(bg), bg
	case RoleMarker:
		return colors[s.Workload], ""
	case RoleBusy:
		return busyColor(s.Level), ""
	case RoleDim:
		return "#808080", ""
	case RoleWarn:
		return "#d62728", ""
	}
	return "", ""
}

// busyColor runs from green (idle) through yellow to red (saturated).
func busyColor(level int) string {
	switch {
	case level < 0:
		return "#808080"
	case level <= 3:
		return "#2ca02c"
	case level <= 6:
		return "#d4a017"
	}
	return "#d62728"
}

// busyGlyphs draw a utilisation from 0 to 8 eighths.
var busyGlyphs = []rune(" ▁▂▃▄▅▆▇█")

// busyLevel is a busy fraction in eighths; a busy CPU never shows blank.
func busyLevel(busy float64) int {
	l := int(busy*8 + 0.5)
	if l == 0 && busy > 0.01 {
		l = 1
	}
	return min(max(l, 0), 8)
}

func pad(s string, w int, right bool) string {
	n := utf8.RuneCountInString(s)
	if n > w {
		if w <= 1 {
			return string([]rune(s)[:w])
		}
		return string([]rune(s)[:w-1]) + "…"
	}
	if right {
		return strings.Repeat(" ", w-n) + s
	}
	return s + strings.Repeat(" ", w-n)
}

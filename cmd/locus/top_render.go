package main

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/locus-project/locus/pkg/view"
)

// renderFrame colours a frame's spans: the frame decides what each span
// is, this only maps it to the terminal's colours (lipgloss degrades them
// to what the terminal supports).
func renderFrame(r *lipgloss.Renderer, lines []view.Line, colors map[string]string) string {
	cache := map[view.Style]lipgloss.Style{}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, sp := range l {
			st, ok := cache[sp.Style]
			if !ok {
				st = spanStyle(r, sp.Style, colors)
				cache[sp.Style] = st
			}
			b.WriteString(st.Render(sp.Text))
		}
	}
	return b.String()
}

func spanStyle(r *lipgloss.Renderer, s view.Style, colors map[string]string) lipgloss.Style {
	st := r.NewStyle()
	fg, bg := s.Colors(colors)
	if fg != "" {
		st = st.Foreground(lipgloss.Color(fg))
	}
	if bg != "" {
		st = st.Background(lipgloss.Color(bg))
	}
	switch s.Role {
	case view.RoleTitle:
		st = st.Bold(true).Reverse(true)
	case view.RoleHeader:
		st = st.Bold(true)
	case view.RoleSorted:
		st = st.Bold(true).Underline(true)
	case view.RoleMarker:
		st = st.Bold(true)
	}
	return st
}

package main

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/locus-project/locus/pkg/view"
)

// topModel is the bubbletea model of `locus top`: the last snapshot and
// what the user asked for. Drawing is view.Frame's; this only reacts.
type topModel struct {
	src      *snapshotSource
	interval time.Duration
	snap     *view.Snapshot
	opts     view.FrameOptions
	styles   *lipgloss.Renderer
}

type snapMsg struct {
	snap view.Snapshot
	err  error
}

type tickMsg struct{}

func newTopModel(src *snapshotSource, fo view.FrameOptions, interval time.Duration) *topModel {
	fo.Location = time.Local
	return &topModel{src: src, interval: interval, opts: fo, styles: lipgloss.DefaultRenderer()}
}

func (m *topModel) Init() tea.Cmd { return m.fetch }

// fetch runs off the update loop: a slow agent never freezes the keys.
func (m *topModel) fetch() tea.Msg {
	snap, err := m.src.fetch()
	return snapMsg{snap: snap, err: err}
}

func (m *topModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.opts.Width, m.opts.Height = msg.Width, msg.Height
	case snapMsg:
		m.opts.Err = ""
		if msg.err != nil {
			m.opts.Err = msg.err.Error()
		} else if !m.opts.Paused {
			m.snap = &msg.snap
		}
		return m, tea.Tick(m.interval, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.fetch
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// key applies one key press; it returns tea.Quit for q.
func (m *topModel) key(k tea.KeyMsg) tea.Cmd {
	// Keys typed faster than the terminal is read arrive as one message.
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 {
		var quit tea.Cmd
		for _, r := range k.Runes {
			if cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}); cmd != nil {
				quit = cmd
				break
			}
		}
		return quit
	}
	o := &m.opts
	if o.EditingFilter {
		switch k.Type {
		case tea.KeyEnter:
			o.EditingFilter = false
		case tea.KeyEsc:
			o.EditingFilter, o.Filter = false, ""
		case tea.KeyBackspace:
			if r := []rune(o.Filter); len(r) > 0 {
				o.Filter = string(r[:len(r)-1])
			}
		case tea.KeyCtrlC:
			return tea.Quit
		case tea.KeyRunes, tea.KeySpace:
			o.Filter += string(k.Runes)
		}
		return nil
	}
	switch k.String() {
	case "q", "ctrl+c":
		return tea.Quit
	case "n":
		m.sortBy(view.SortName)
	case "c":
		m.sortBy(view.SortCPU)
	case "m":
		m.sortBy(view.SortMemory)
	case "l":
		m.sortBy(view.SortLocal)
	case "r":
		o.Reverse = !o.Reverse
	case "/":
		o.EditingFilter = true
	case "esc":
		o.Filter = ""
	case " ", "p":
		o.Paused = !o.Paused
	}
	return nil
}

// sortBy sorts by key, in its natural direction; the same key again
// reverses it.
func (m *topModel) sortBy(key view.SortKey) {
	if m.opts.Sort == key || (m.opts.Sort == "" && key == view.SortName) {
		m.opts.Reverse = !m.opts.Reverse
		return
	}
	m.opts.Sort, m.opts.Reverse = key, false
}

func (m *topModel) View() string {
	if m.opts.Width == 0 {
		return "" // no size yet
	}
	if m.snap == nil {
		if m.opts.Err != "" {
			return "locus top: " + m.opts.Err
		}
		return "locus top: reading…"
	}
	return renderFrame(m.styles, view.Frame(m.snap, m.opts), view.Colors(m.snap.Workloads))
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/view"
)

func newTopCmd() *cobra.Command {
	src := &snapshotSource{}
	var version, sortBy string
	var once bool
	var interval time.Duration
	var width, height int
	fo := view.FrameOptions{}
	cmd := &cobra.Command{
		Use:   "top [--agent-addr HOST:PORT] [--once]",
		Short: "Watch NUMA nodes, who owns each CPU, and each workload, live",
		Long: `A full-screen view refreshed every second from the running agent (its
/ui/snapshot.json on --agent-addr): per NUMA node its CPUs coloured by owner
(a workload's letter for its own CPUs, = shared pool, ~ BE pool, # reserved,
. idle) with their utilisation below, and the node's memory; then one row per
workload: QoS class, pool, CPUs, NUMA nodes, CPU use, memory, how much of it is
on its own nodes, and its last memory migration.

Without an agent answering, it reads the host itself (--sysfs-root,
--proc-root, --cgroup-root) and the status file an agent left in --state-dir.

Keys: n c m l sort by name, CPU, memory, local ratio (again: reverse), r
reverse, / filter by name (enter keeps, esc clears), space pause, q quit.
--once prints one frame without colour, for scripts.`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := cgroup.ParseVersion(version)
			if err != nil {
				return usageError{err}
			}
			src.version = v
			if fo.Sort, err = parseSortKey(sortBy); err != nil {
				return err
			}
			if interval < 100*time.Millisecond {
				return usagef("--interval %s is below 100ms", interval)
			}
			if err := checkFrameSize(cmd, width, height); err != nil {
				return err
			}
			if once {
				return topOnce(cmd, src, fo, interval, width, height)
			}
			if !isTerminal(cmd.OutOrStdout()) {
				return usagef("locus top needs a terminal; use --once to print one frame")
			}
			m := newTopModel(src, fo, interval)
			_, err = tea.NewProgram(m, tea.WithAltScreen(), tea.WithOutput(cmd.OutOrStdout())).Run()
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&src.agentAddr, "agent-addr", "127.0.0.1:19316", `the agent's --status-addr ("" reads the host only)`)
	f.StringVar(&src.stateDir, "state-dir", agent.DefaultStateDir, "the agent's state directory, read when no agent answers")
	f.StringVar(&src.sysfsRoot, "sysfs-root", "/sys", "where sysfs is mounted (without an agent)")
	f.StringVar(&src.procRoot, "proc-root", "/proc", "where procfs is mounted (without an agent)")
	f.StringVar(&src.cgroupRoot, "cgroup-root", cgroup.DefaultRoot, "where cgroups are mounted (without an agent)")
	f.StringVar(&version, "cgroup-version", "auto", "auto, v1 or v2 (without an agent)")
	f.BoolVar(&once, "once", false, "print one frame and exit")
	f.DurationVar(&interval, "interval", time.Second, "time between refreshes (and between the two samples of --once)")
	f.StringVar(&sortBy, "sort", "name", "initial sort: name, cpu, mem or local")
	f.StringVar(&fo.Filter, "filter", "", "initial filter: workloads whose name contains it")
	f.IntVar(&width, "width", 0, "--once: frame width (default: the terminal's, else 120)")
	f.IntVar(&height, "height", 0, "--once: frame height (default: the terminal's, else everything)")
	return cmd
}

// The largest frame --once draws: wider than any terminal, and a bound on
// what one frame may allocate.
const maxFrameWidth, maxFrameHeight = 10000, 100000

// checkFrameSize refuses a --width or --height that draws nothing (0 means
// the terminal's own) or more than any screen.
func checkFrameSize(cmd *cobra.Command, width, height int) error {
	for _, f := range []struct {
		name       string
		value, max int
	}{{"width", width, maxFrameWidth}, {"height", height, maxFrameHeight}} {
		switch {
		case f.value < 0:
			return usagef("--%s %d is negative: want 1 to %d columns or lines (0: the terminal's)", f.name, f.value, f.max)
		case f.value > f.max:
			return usagef("--%s %d is over %d", f.name, f.value, f.max)
		case cmd.Flags().Changed(f.name) && !cmd.Flags().Changed("once"):
			return usagef("--%s is for --once; the live view takes the terminal's size", f.name)
		}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func parseSortKey(s string) (view.SortKey, error) {
	switch k := view.SortKey(s); k {
	case view.SortName, view.SortCPU, view.SortMemory, view.SortLocal:
		return k, nil
	}
	return "", usagef("unknown --sort %q: want name, cpu, mem or local", s)
}

// topOnce samples twice, interval apart, so utilisation is measured, and
// prints the frame.
func topOnce(cmd *cobra.Command, src *snapshotSource, fo view.FrameOptions, interval time.Duration, width, height int) error {
	if _, err := src.fetch(); err != nil {
		return err
	}
	time.Sleep(interval)
	snap, err := src.fetch()
	if err != nil {
		return err
	}
	tw, th, terr := 0, 0, errors.New("not a terminal")
	if f, ok := cmd.OutOrStdout().(*os.File); ok && isTerminal(f) {
		tw, th, terr = term.GetSize(int(f.Fd()))
	}
	if width == 0 {
		width = 120
		if terr == nil {
			width = tw
		}
	}
	if height == 0 {
		height = 10000 // a frame is only as long as what it shows
		if terr == nil {
			height = th
		}
	}
	fo.Width, fo.Height, fo.Static, fo.Location = width, height, true, time.Local
	_, err = fmt.Fprint(cmd.OutOrStdout(), view.Plain(view.Frame(&snap, fo)))
	return err
}

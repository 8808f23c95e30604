package main

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/atomicfile"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/view"
)

// svgFlags are `locus topology --svg FILE` and where it asks the agent.
type svgFlags struct {
	file      string
	agentAddr string
}

func addSVGFlags(cmd *cobra.Command, f *svgFlags) {
	cmd.Flags().StringVar(&f.file, "svg", "", `draw the machine as an SVG map into FILE ("-" for stdout)`)
	cmd.Flags().StringVar(&f.agentAddr, "agent-addr", "127.0.0.1:19316",
		`the agent whose CPU and memory owners to draw (--svg) and whose workloads hold each device ("" for none; not asked with --sysfs-root)`)
}

// writeSVG draws t, with the owners the running agent reports.
func writeSVG(cmd *cobra.Command, f svgFlags, t *topology.Topology) error {
	snap := machineSnapshot(cmd, f, t, "drawing the machine without owners")
	out := view.SVG(&snap)
	if f.file == "-" {
		_, err := cmd.OutOrStdout().Write(out)
		return err
	}
	// Replaced whole, so a viewer reloading it never reads half a map.
	if err := atomicfile.Write(f.file, out, 0o644); err != nil {
		return svgWriteError(f.file, err)
	}
	return nil
}

// machineSnapshot is the running agent's snapshot (its machine, owners and
// device holders) when it runs on this machine, else t alone; without
// says on stderr what the output lacks then ("": nothing worth saying).
// With --sysfs-root the machine is another one (a fixture), so no agent
// is asked.
func machineSnapshot(cmd *cobra.Command, f svgFlags, t *topology.Topology, without string) view.Snapshot {
	snap := view.Snapshot{Time: time.Now().UTC(), Source: "host", Topology: t}
	if f.agentAddr == "" || cmd.Flags().Changed("sysfs-root") {
		return snap
	}
	src := &snapshotSource{agentAddr: f.agentAddr}
	s, err := src.fromAgent()
	if err != nil {
		if without != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "locus: no agent at %s (%v): %s\n", f.agentAddr, err, without)
		}
		return snap
	}
	return s
}

// svgWriteError names the user's file: the write goes through a temporary
// file beside it, whose name means nothing to whoever typed --svg.
func svgWriteError(file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("--svg %s: %w", file, err)
}

package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/view"
)

func newTopologyCmd() *cobra.Command {
	var sysfsRoot, output string
	var svg svgFlags
	cmd := &cobra.Command{
		Use:   "topology [--svg FILE]",
		Short: "Show the CPU, cache and NUMA layout of this machine",
		Long: `Show the machine as Locus sees it: sockets, NUMA nodes with their CPUs and
memory, L3 cache groups, the node distance matrix and the PCI devices under the
node each hangs off, with the running agent's workloads holding each
(docs/topology.md). -o json prints the form that "locus plan --topology" reads
back. --svg FILE draws it as a map, with the running agent's CPU and memory
owners (docs/ui.md).`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			t, err := topology.Discover(sysfsRoot)
			if err != nil {
				return err
			}
			if svg.file != "" {
				return writeSVG(cmd, svg, t)
			}
			return writeTopology(cmd, svg, t, output)
		},
	}
	cmd.Flags().StringVar(&sysfsRoot, "sysfs-root", "/sys", "where sysfs is mounted (a tree from 'locus topology fixture' works too)")
	outputFlag(cmd, &output)
	addSVGFlags(cmd, &svg)
	cmd.AddCommand(newTopologyFixtureCmd())
	return cmd
}

// writeTopology prints t as a table or JSON, each device with the
// workloads the running agent says hold it.
func writeTopology(cmd *cobra.Command, f svgFlags, t *topology.Topology, output string) error {
	without := ""
	if len(t.Devices) > 0 {
		without = "listing the devices without their holders"
	}
	snap := machineSnapshot(cmd, f, t, without)
	if output == "json" {
		b, err := view.TopologyJSON(&snap)
		if err != nil {
			return err
		}
		return writeJSON(cmd.OutOrStdout(), json.RawMessage(b))
	}
	return view.TopologyText(cmd.OutOrStdout(), &snap)
}

func newTopologyFixtureCmd() *cobra.Command {
	var shapeName, out, offline, isolated string
	cmd := &cobra.Command{
		Use:   "fixture --shape NAME --out DIR",
		Short: "Write the sysfs tree of a synthetic machine, for tests and benchmarks",
		Long: `Write the sysfs tree (devices/system/cpu, devices/system/node and, for a
machine with devices, bus/pci/devices) of one of the machines Locus ships as fixtures into an empty or new directory, so that
"locus topology --sysfs-root DIR" and other tools can run against it.

Shapes: ` + strings.Join(fixtureShapeNames(), ", "),
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, ok := lookupFixtureShape(shapeName)
			if !ok {
				return usagef("unknown --shape %q: want one of %s", shapeName, strings.Join(fixtureShapeNames(), ", "))
			}
			if out == "" {
				return usagef("--out is required")
			}
			for _, f := range []struct{ name, list string }{{"offline", offline}, {"isolated", isolated}} {
				if _, err := topology.ParseCPUList(f.list); err != nil {
					return usagef("--%s: %v", f.name, err)
				}
			}
			s.Offline, s.Isolated = offline, isolated
			if err := fixture.WriteSysfs(s, out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s to %s\n", s.Name, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&shapeName, "shape", "", "machine to write: "+strings.Join(fixtureShapeNames(), ", "))
	cmd.Flags().StringVar(&out, "out", "", "directory to write the tree into (absent or empty)")
	cmd.Flags().StringVar(&offline, "offline", "", "CPUs to present as offline, in Linux list format")
	cmd.Flags().StringVar(&isolated, "isolated", "", "CPUs to list as isolated, in Linux list format")
	return cmd
}

// rejectTopologyArgs makes a stray positional argument a usage error (exit 2);
// cobra.NoArgs would report it as a plain failure.
func rejectTopologyArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

func lookupFixtureShape(name string) (fixture.Shape, bool) { return fixture.Named(name) }

func fixtureShapeNames() []string {
	var names []string
	for _, s := range append(fixture.Shipped(), fixture.WithDevices()...) {
		names = append(names, s.Name)
	}
	return names
}

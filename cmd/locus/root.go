package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "locus",
		Short:         "NUMA- and QoS-aware resource manager",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Flag errors are the caller's: exit 2 with a one-line message.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newTopologyCmd(), newPlanCmd(), newRunCmd(), newRunStubCmd(), newStressCmd(),
		newAgentCmd(), newStatusCmd(), newEventsCmd(), newShimCmd(), newNumastatCmd(), newMigrateCmd(), newAdviseCmd(), newTopCmd())
	return root
}

// outputFlag adds -o/--output (table or json) to cmd.
func outputFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVarP(dst, "output", "o", "table", "output format: table or json")
}

func checkOutput(format string) error {
	if format != "table" && format != "json" {
		return usagef("unknown output format %q: want table or json", format)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/cmd/internal/buildinfo"
)

func newVersionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary",
		Args:  rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			info := buildinfo.Get()
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), info)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), info.String("locus"))
			return err
		},
	}
	outputFlag(cmd, &output)
	return cmd
}

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/eventlog"
)

func newEventsCmd() *cobra.Command {
	var stateDir, output, workload string
	cmd := &cobra.Command{
		Use:   "events [--state-dir DIR] [--workload NAME] [-o table|json]",
		Short: "Show what the agent did and what went wrong, oldest first",
		Args:  rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			evs, err := eventlog.Read(stateDir)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no agent state in %s: is `locus agent` running?", stateDir)
			}
			if err != nil {
				return err
			}
			var shown []eventlog.Event
			for _, e := range evs {
				if workload == "" || e.Workload == workload {
					shown = append(shown, e)
				}
			}
			if output == "json" {
				if shown == nil {
					shown = []eventlog.Event{}
				}
				return writeJSON(cmd.OutOrStdout(), shown)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tTYPE\tREASON\tWORKLOAD\tMESSAGE")
			for _, e := range shown {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"),
					e.Type, e.Reason, orDash(e.Workload), e.Message)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", agent.DefaultStateDir, "the agent's state directory")
	cmd.Flags().StringVar(&workload, "workload", "", "only this workload's events")
	outputFlag(cmd, &output)
	return cmd
}

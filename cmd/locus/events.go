package main

import (
	"errors"
	"fmt"
	"io/fs"
	"text/tabwriter"
	"time"

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
				return writeJSON(cmd.OutOrStdout(), eventsJSON(shown))
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tTYPE\tREASON\tWORKLOAD\tMESSAGE")
			for _, e := range shown {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", eventTime(e.Time),
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

// eventTime is a record's time as the table shows it; a record written
// without one (by hand, or torn) shows "-", not Go's zero time, year 1.
func eventTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// eventJSON is an event as -o json prints it: the time is left out when the
// record has none.
type eventJSON struct {
	Time *time.Time `json:"time,omitempty"`
	eventlog.Event
}

func eventsJSON(evs []eventlog.Event) []eventJSON {
	out := make([]eventJSON, 0, len(evs))
	for _, e := range evs {
		j := eventJSON{Event: e}
		if !e.Time.IsZero() {
			j.Time = &e.Time
		}
		out = append(out, j)
	}
	return out
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "locus",
		Short: "NUMA- and QoS-aware resource manager",
		Long: `Locus: NUMA- and QoS-aware resource manager.

Exit status, for every command: 0 success; 1 the command was right but failed
(a file it cannot read, an agent not running, a request that does not fit);
2 a usage error (an unknown command or flag, a bad flag value, a file that is
not what its flag wants). locus doctor exits 0/1/2 for ok/warn/fail, and
locus run with its command's status.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// An unknown command is a usage error like an unknown flag; without
		// Args, cobra reports it as a plain error (exit 1).
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SuggestionsMinimumDistance = 2
	// Flag errors are the caller's: exit 2 with a one-line message.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{plainFlagError(err)} })
	root.AddCommand(newTopologyCmd(), newPlanCmd(), newRunCmd(), newRunStubCmd(), newStressCmd(),
		newAgentCmd(), newStatusCmd(), newEventsCmd(), newShimCmd(), newNumastatCmd(), newMigrateCmd(), newAdviseCmd(), newNumadCmd(), newTopCmd(),
		newDoctorCmd(), newVersionCmd(), newRemoveAgentsCmd())
	return root
}

func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q: run 'locus --help' for the commands", args[0])
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg = fmt.Sprintf("unknown command %q: did you mean %q?", args[0], s[0])
	}
	return usageError{errors.New(msg)}
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

// badNumberRE is pflag's message for a value its number or boolean parser
// refused, which names Go's strconv function instead of what was wanted.
var badNumberRE = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: strconv\.Parse(Int|Uint|Float|Bool): .*$`)

// plainFlagError says what a flag wants instead of how Go parsed it.
func plainFlagError(err error) error {
	m := badNumberRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := map[string]string{"Int": "a whole number", "Uint": "a whole number, 0 or more",
		"Float": "a number", "Bool": "true or false"}[m[3]]
	return fmt.Errorf("%s %q: want %s", m[2], m[1], want)
}

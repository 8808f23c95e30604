package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"

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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{plainFlagError(err)} })
	root.AddCommand(newTopologyCmd(), newPlanCmd(), newRunCmd(), newRunStubCmd(), newStressCmd(),
		newAgentCmd(), newStatusCmd(), newEventsCmd(), newShimCmd(), newNumastatCmd(), newMigrateCmd(), newAdviseCmd(), newTopCmd(),
		newDoctorCmd(), newVersionCmd(), newRemoveAgentsCmd())
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

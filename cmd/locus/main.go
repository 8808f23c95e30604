// Command locus is Locus's node agent and command-line tool in one binary.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/stopsignal"
)

func main() {
	if invokedAsNumad(os.Args[0]) {
		// libvirt runs numad by name and reads its stdout: numad's command
		// line, not locus's, so cobra never sees it.
		stopsignal.Release()
		os.Exit(runNumad(os.Args[0], os.Args[1:], hostNumadEnv(), os.Stdout, os.Stderr))
	}
	root := newRootCmd()
	if cmd, _, err := root.Find(os.Args[1:]); err != nil || cmd.Annotations[cleanStop] == "" {
		stopsignal.Release() // this command needs no clean shutdown
	}
	if err := root.Execute(); err != nil {
		var quiet quietExit
		if errors.As(err, &quiet) {
			os.Exit(quiet.code)
		}
		fmt.Fprintln(os.Stderr, "locus:", err)
		os.Exit(exitCode(err))
	}
}

// usageError marks errors caused by the caller's input (bad flags, unparsable
// CPU sets, impossible requests): they exit with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ds doctorStatus
	if errors.As(err, &ds) {
		return ds.code
	}
	var quiet quietExit
	if errors.As(err, &quiet) {
		return quiet.code
	}
	return 1
}

// cleanStop annotates a command that shuts down cleanly on SIGTERM or
// SIGINT, however early they come (stopsignal.Context).
const cleanStop = "locus.io/clean-stop"

func withCleanStop(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[cleanStop] = "true"
	return cmd
}

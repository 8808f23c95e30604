// Package reexec lets a guest test binary, run again by its tests or by a
// benchmark script with an environment variable set, act as a helper
// process instead of running its tests.
package reexec

import (
	"fmt"
	"os"
	"testing"
)

// Main is a TestMain: with env set to "1" it runs helper and exits with
// its outcome (its error on stderr, prefixed by name), otherwise it runs
// the tests.
func Main(m *testing.M, env, name string, helper func() error) {
	if os.Getenv(env) == "1" {
		if err := helper(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

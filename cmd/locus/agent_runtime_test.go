package main

import (
	"context"
	"runtime/debug"
	"testing"
)

// The agent sets its soft memory limit unless GOMEMLIMIT did, which the
// runtime has applied by then and the agent leaves in force.
func TestMemoryLimitDefaultUnlessGOMEMLIMIT(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const fromEnv = 100 << 30 // as the runtime would have set GOMEMLIMIT=100GiB
	debug.SetMemoryLimit(fromEnv)
	env := func(k string) (string, bool) { return "100GiB", k == "GOMEMLIMIT" }
	if from := setMemoryLimit(ctx, env); from != "GOMEMLIMIT=100GiB" || debug.SetMemoryLimit(-1) != fromEnv {
		t.Errorf("with GOMEMLIMIT: %s, limit in force %d, want %d", from, debug.SetMemoryLimit(-1), int64(fromEnv))
	}

	noEnv := func(string) (string, bool) { return "", false }
	if from := setMemoryLimit(ctx, noEnv); from != "default" || debug.SetMemoryLimit(-1) >= fromEnv {
		t.Errorf("without GOMEMLIMIT: %s, limit in force %d, want the default", from, debug.SetMemoryLimit(-1))
	}
}

func TestLogLevelFlag(t *testing.T) {
	for _, level := range []string{"debug", "info", "warn", "error", "DEBUG"} {
		if _, err := stderrLogger(level); err != nil {
			t.Errorf("--log-level %s: %v", level, err)
		}
	}
	if _, err := stderrLogger("verbose"); err == nil {
		t.Error("--log-level verbose accepted")
	}
}

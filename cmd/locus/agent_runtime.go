package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/locus-project/locus/pkg/memlimit"
)

// stderrLogger is the agent's logger at the --log-level given.
func stderrLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// defaultMemoryFloor is the agent's soft memory limit (pkg/memlimit: the
// floor, or twice the live heap when that is more) unless GOMEMLIMIT is set.
// Without it, Go's collector lets the heap grow to twice what is live
// before collecting, and under a steady churn the idle trim (pkg/idletrim)
// does not find the quiet spell that hands the rest back. Under the 300-pod
// churn (docs/benchmarks.md, "Without client-go's clientset"), 30 MiB kept
// the agent's RSS at 48.4–49.3 MiB, against 50.3–51.0 with 32, for 10 and
// 18 % more CPU per reconcile (the medians of two sets); 28 MiB cost 49 %,
// 24 MiB twice the CPU.
const defaultMemoryFloor = 30 << 20

// memoryLimitEvery is how often the limit follows the live heap.
const memoryLimitEvery = 5 * time.Second

// setMemoryLimit keeps the default soft limit in force until ctx ends,
// unless the environment set one (GOMEMLIMIT, which the runtime has applied
// already; "off" for none). It says which.
func setMemoryLimit(ctx context.Context, lookupEnv func(string) (string, bool)) string {
	if v, set := lookupEnv("GOMEMLIMIT"); set {
		return "GOMEMLIMIT=" + v
	}
	memlimit.Follow(ctx, defaultMemoryFloor, memoryLimitEvery)
	return "default"
}

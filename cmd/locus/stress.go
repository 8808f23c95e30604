package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/pkg/stress"
)

type stressOptions struct {
	cpu, memory, memBWSize  string
	cpuLoad, memBW          int
	duration, touchInterval time.Duration
	verify                  bool
	seed                    uint64
	peaks                   int
	peakWork, peakEvery     time.Duration
}

func newStressCmd() *cobra.Command {
	var o stressOptions
	cmd := &cobra.Command{
		Use:   "stress [--cpu SHARE] [--memory QUANTITY] [--mem-bw N] [--duration D] [--verify]",
		Short: "Burn a share of CPU, hold resident memory and stream memory bandwidth, for demos and tests",
		Long: `Keep a share of CPU busy and a quantity of memory resident until --duration
passes (0: until SIGTERM or SIGINT), then print a one-line summary.

--cpu is in CPUs: 0.1 keeps one thread busy 10 % of the time, 2 keeps two
threads fully busy, 2.5 adds a third thread at 50 % (500m works too).
--cpu-load P scales every thread to P % (as stress-ng): --cpu 1 --cpu-load 10
is the same as --cpu 0.1.
--memory is a quantity (64Mi, 1G). The memory is filled with a pattern and
its checksum is kept; every --touch-interval each page is read and written
back, and with --verify the checksum is re-checked then and at the end. A
mismatch names the first corrupted byte and exits with status 1, so tests that
move the memory (NUMA migration) can prove the data survived.

--mem-bw N adds N threads that take memory bandwidth: each copies one half
of a buffer of its own (--mem-bw-size, 128Mi by default, beyond a server's
L3) onto the other and back, so every pass reads and writes DRAM. The
summary gives the bytes they moved and the rate.

--peaks N runs a bursty load instead: every --peak-every, N threads each
spend --peak-work of CPU time at once, and the summary gives the time each
peak took (p50, p99, max). Under a CFS quota below N CPUs a peak runs out of
the period's quota and waits for the next one, unless the group may burst
(docs/cpu-burst.md).`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if o.peaks > 0 {
				sum, err := stress.RunPeaks(ctx, stress.Peaks{Threads: o.peaks, Work: o.peakWork, Every: o.peakEvery, Duration: o.duration})
				fmt.Fprintln(cmd.OutOrStdout(), "locus stress:", sum)
				return err
			}
			sum, err := stress.Run(ctx, cfg)
			fmt.Fprintln(cmd.OutOrStdout(), "locus stress:", sum)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cpu, "cpu", "0", "CPU share to burn, in CPUs (0.1, 2, 500m)")
	f.IntVar(&o.cpuLoad, "cpu-load", 100, "percent of its share each burner thread is busy (0-100)")
	f.StringVar(&o.memory, "memory", "0", "memory to hold resident (64Mi, 1G)")
	f.IntVar(&o.memBW, "mem-bw", 0, fmt.Sprintf("threads streaming over buffers beyond the L3, for memory bandwidth (0-%d)", stress.MaxMemBWWorkers))
	f.StringVar(&o.memBWSize, "mem-bw-size", "128Mi", "buffer of each --mem-bw thread (1Mi-16Gi)")
	f.DurationVar(&o.duration, "duration", 0, "how long to run; 0 runs until SIGTERM or SIGINT")
	f.DurationVar(&o.touchInterval, "touch-interval", time.Second, "how often to touch every page (and verify)")
	f.BoolVar(&o.verify, "verify", false, "re-check the memory checksum every touch and at exit; exit 1 on corruption")
	f.Uint64Var(&o.seed, "seed", uint64(os.Getpid()), "seed of the memory pattern")
	f.IntVar(&o.peaks, "peaks", 0, "run a bursty load of this many threads per peak instead (see --peak-work, --peak-every)")
	f.DurationVar(&o.peakWork, "peak-work", 20*time.Millisecond, "CPU time each thread spends per peak")
	f.DurationVar(&o.peakEvery, "peak-every", 500*time.Millisecond, "time from one peak's start to the next")
	return cmd
}

func (o stressOptions) config() (stress.Config, error) {
	cpu, err := nonNegativeQuantity("--cpu", o.cpu)
	if err != nil {
		return stress.Config{}, err
	}
	mem, err := nonNegativeQuantity("--memory", o.memory)
	if err != nil {
		return stress.Config{}, err
	}
	if o.cpuLoad < 0 || o.cpuLoad > 100 {
		return stress.Config{}, usagef("--cpu-load %d: want 0-100", o.cpuLoad)
	}
	if o.duration < 0 {
		return stress.Config{}, usagef("--duration %s is negative", o.duration)
	}
	bwSize, err := nonNegativeQuantity("--mem-bw-size", o.memBWSize)
	if err != nil {
		return stress.Config{}, err
	}
	bw := stress.MemBW{Workers: o.memBW, Bytes: bwSize.Value()}
	if err := bw.Check(); err != nil {
		return stress.Config{}, usagef("%v", err)
	}
	if o.peaks > 0 && (cpu.Sign() > 0 || mem.Sign() > 0 || bw.Workers > 0) {
		return stress.Config{}, usagef("--peaks runs alone: drop --cpu, --memory and --mem-bw")
	}
	if o.peaks > 0 {
		if err := (stress.Peaks{Threads: o.peaks, Work: o.peakWork, Every: o.peakEvery, Duration: o.duration}).Check(); err != nil {
			return stress.Config{}, usagef("%v", err)
		}
	}
	if o.touchInterval <= 0 {
		return stress.Config{}, usagef("--touch-interval %s must be positive", o.touchInterval)
	}
	return stress.Config{CPUMilli: cpu.MilliValue(), LoadPercent: o.cpuLoad, MemoryBytes: mem.Value(), Duration: o.duration,
		TouchInterval: o.touchInterval, Verify: o.verify, Seed: o.seed, MemBW: bw}, nil
}

// nonNegativeQuantity parses a Kubernetes quantity flag ("0.5", "500m", "64Mi").
func nonNegativeQuantity(flag, s string) (resource.Quantity, error) {
	return boundedQuantity(flag, s, maxQuantity, "")
}

// boundedQuantity parses a quantity flag of 0 to limit; unit follows the
// limit in the error ("65536 CPUs").
func boundedQuantity(flag, s string, limit resource.Quantity, unit string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, usagef("%s %q is not a quantity (like 0.5, 500m, 64Mi, 1G)", flag, s)
	}
	if q.Sign() < 0 {
		return q, usagef("%s %s is negative", flag, s)
	}
	if q.Cmp(limit) > 0 {
		return q, usagef("%s %s: more than %s%s, which no machine has", flag, s, limit.String(), unit)
	}
	return q, nil
}

// maxMachineCPUs is more CPUs than any machine Linux runs on has (NR_CPUS is
// at most 8192): a CPU count above it is a typo.
const maxMachineCPUs = 65536

// maxQuantity bounds every quantity flag: 1Pi bytes is beyond any machine's
// memory, and 1Pi CPUs in millicores (about 1.1e18) still fits the int64
// that Value and MilliValue return, so no flag overflows into a small or
// negative number.
var maxQuantity = resource.MustParse("1Pi")

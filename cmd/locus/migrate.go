package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/locality"
)

type migrateOptions struct {
	target   localityTarget
	to       string
	local    bool
	budgetMS int
	stall    string
	strategy string
	margin   string
	output   string
}

func newMigrateCmd() *cobra.Command {
	var o migrateOptions
	cmd := &cobra.Command{
		Use:   "migrate (--pid PID | --cgroup PATH | --workload NAME) [--to NODES | --local] [--budget-ms N] [--stall page|call] [--strategy move_pages|migrate_pages]",
		Short: "Move a process's, cgroup's or workload's remote memory to its local NUMA nodes",
		Long: `Move memory that sits on remote NUMA nodes to the local ones, while the
processes keep running. The local nodes are those of the CPUs the target may
run on (--local, the default) or the nodes given with --to.

The default strategy, move_pages, moves pages in batches sized so that no
thread of the process waits longer than --budget-ms: the kernel moves a call's
pages one by one (one huge page, or from Linux 6.3 up to 512 base pages, at
a time), so a thread waits for the page it touches, not for the whole call
(--stall page, the default); --stall call bounds every call instead, as
before. migrate_pages moves a process node to node in one call (faster; it
holds the process's mmap lock throughout: unbounded stall). No target node
is filled beyond its free-memory margin (--margin, default max(256Mi, 3%)).

Prints pages moved, remote pages left, local ratio before and after,
throughput, the longest wait and the longest call. Exits 1 when a process failed.`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMigrate(cmd, o) },
	}
	o.target.flags(cmd, "pid", "")
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "move to these NUMA nodes (list format: 0 or 0-1) instead of the local ones")
	f.BoolVar(&o.local, "local", false, "move to the nodes of the target's CPUs (the default)")
	f.IntVar(&o.budgetMS, "budget-ms", int(locality.DefaultBudget/time.Millisecond), "longest wait of a thread of the process, in milliseconds (see --stall)")
	f.StringVar(&o.stall, "stall", string(locality.StallPage), "what --budget-ms bounds: page (the move of the kernel's unit) or call (every call)")
	f.StringVar(&o.strategy, "strategy", string(locality.StrategyMovePages), "move_pages or migrate_pages")
	f.StringVar(&o.margin, "margin", "", "free memory to keep on each target node: a size (256Mi), a percentage (3%) or both (256Mi,3%)")
	outputFlag(cmd, &o.output)
	return cmd
}

func runMigrate(cmd *cobra.Command, o migrateOptions) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	opts, err := o.options()
	if err != nil {
		return err
	}
	if o.to != "" && o.local {
		return usagef("give --to or --local, not both")
	}
	t, err := o.target.resolve("pid")
	if err != nil {
		return err
	}
	if o.to != "" {
		if t.Local, err = locality.ParseNodeList(o.to); err != nil || len(t.Local) == 0 {
			return usagef("--to %q: want NUMA node ids such as 0 or 0-1", o.to)
		}
	}
	nodes, err := locality.MemoryNodes(o.target.sysfsRoot)
	if err != nil {
		return err
	}
	if o.to != "" {
		if err := targetsHaveMemory(t.Local, nodes); err != nil {
			return usagef("--to %q: %v", o.to, err)
		}
	}
	res, err := locality.Migrate(cmd.Context(), locality.Request{PIDs: t.PIDs, Local: t.Local, Nodes: nodes}, opts)
	if err != nil {
		return err
	}
	if o.output == "json" {
		err = writeJSON(cmd.OutOrStdout(), migrateJSON(t, res))
	} else {
		err = renderMigrate(cmd.OutOrStdout(), t, res, opts)
	}
	if err != nil {
		return err
	}
	if f := res.Failures(); len(f) > 0 {
		return fmt.Errorf("%d process(es) failed", len(f))
	}
	return nil
}

// targetsHaveMemory refuses target nodes that do not exist or hold no
// memory: nothing could move there, and a silent success would mislead.
func targetsHaveMemory(targets, memoryNodes []int) error {
	for _, n := range targets {
		if !slices.Contains(memoryNodes, n) {
			return fmt.Errorf("NUMA node %d does not exist or has no memory (nodes with memory: %s)", n, locality.FormatNodeList(memoryNodes))
		}
	}
	return nil
}

func (o migrateOptions) options() (locality.Options, error) {
	opts := locality.Options{ProcRoot: o.target.procRoot, SysfsRoot: o.target.sysfsRoot, Margin: locality.DefaultMargin}
	switch s := locality.Strategy(o.strategy); s {
	case locality.StrategyMovePages, locality.StrategyMigratePages:
		opts.Strategy = s
	default:
		return opts, usagef("--strategy %q: want move_pages or migrate_pages", o.strategy)
	}
	if o.budgetMS <= 0 {
		return opts, usagef("--budget-ms %d: want a positive number of milliseconds", o.budgetMS)
	}
	opts.Budget = time.Duration(o.budgetMS) * time.Millisecond
	switch s := locality.StallBound(o.stall); s {
	case locality.StallPage, locality.StallCall:
		opts.Stall = s
	default:
		return opts, usagef("--stall %q: want page or call", o.stall)
	}
	if o.margin != "" {
		m, err := locality.ParseMargin(o.margin)
		if err != nil {
			return opts, usagef("--margin: %v", err)
		}
		opts.Margin = m
	}
	return opts, nil
}

type migrateProcessJSON struct {
	PID     int             `json:"pid"`
	Moved   []locality.Move `json:"moved,omitempty"`
	Skipped string          `json:"skipped,omitempty"`
	Error   string          `json:"error,omitempty"`
	Stopped []int           `json:"stoppedAtMargin,omitempty"`
	Busy    uint64          `json:"busyPages,omitempty"`
	Shared  uint64          `json:"sharedPages,omitempty"`
	// Unhidden: pages NUMA balancing had hidden from move_pages, touched to move them.
	Unhidden uint64 `json:"unhiddenPages,omitempty"`
	Note     string `json:"note,omitempty"`
}

type migrateResultJSON struct {
	resolvedTarget
	Strategy       string               `json:"strategy"`
	Skipped        string               `json:"skipped,omitempty"`
	PagesMoved     uint64               `json:"pagesMoved"`
	RemotePages    uint64               `json:"remotePagesLeft"`
	RatioBefore    int                  `json:"localRatioBefore"`
	RatioAfter     int                  `json:"localRatioAfter"`
	ThroughputMBps float64              `json:"throughputMBps"`
	Seconds        float64              `json:"seconds"`
	StallBound     string               `json:"stallBound,omitempty"`
	LongestStallMS float64              `json:"longestStallMs"`
	LongestCallMS  float64              `json:"longestCallMs"`
	P99StallMS     float64              `json:"p99StallMs"`
	Calls          int                  `json:"calls"`
	OverBudget     int                  `json:"callsOverBudget"`
	Stopped        []int                `json:"stoppedAtMargin,omitempty"`
	Processes      []migrateProcessJSON `json:"processes"`
}

func migrateJSON(t resolvedTarget, r locality.Result) migrateResultJSON {
	out := migrateResultJSON{resolvedTarget: t, Strategy: string(r.Strategy), Skipped: r.Skipped, PagesMoved: r.Moved,
		RemotePages: r.RemoteLeft, RatioBefore: r.RatioBefore, RatioAfter: r.RatioAfter, ThroughputMBps: r.Throughput(),
		Seconds: r.Elapsed.Seconds(), StallBound: string(r.Stall), LongestStallMS: float64(r.LongestStall.Microseconds()) / 1000,
		LongestCallMS: float64(r.LongestCall.Microseconds()) / 1000,
		P99StallMS:    float64(r.StallP99.Microseconds()) / 1000, Calls: r.Calls, OverBudget: r.OverBudget, Stopped: r.Stopped, Processes: []migrateProcessJSON{}}
	out.Local = r.Local
	for _, p := range r.Processes {
		out.Processes = append(out.Processes, migrateProcessJSON{PID: p.PID, Moved: p.Moved, Skipped: p.Skipped, Error: p.Err,
			Stopped: p.Stopped, Busy: p.Busy, Shared: p.Shared, Unhidden: p.Unhidden, Note: p.Note})
	}
	return out
}

func renderMigrate(w io.Writer, t resolvedTarget, r locality.Result, opts locality.Options) error {
	fmt.Fprintf(w, "%s to local numa %s with %s\n", t.Label, locality.FormatNodeList(r.Local), r.Strategy)
	if r.Skipped != "" {
		fmt.Fprintf(w, "skipped: %s\n", r.Skipped)
	}
	mib := float64(r.MovedBytes()) / (1 << 20)
	fmt.Fprintf(w, "pages moved:        %d (%.1f MB)\n", r.Moved, mib)
	fmt.Fprintf(w, "remote pages left:  %d\n", r.RemoteLeft)
	fmt.Fprintf(w, "local ratio:        %d%% -> %d%%\n", r.RatioBefore, r.RatioAfter)
	fmt.Fprintf(w, "throughput:         %.1f MB/s (%s)\n", r.Throughput(), r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "longest stall:      %s in %d call(s) (budget %s a %s; p99 %s, %d over)\n", r.LongestStall.Round(time.Microsecond), r.Calls,
		opts.Budget, opts.Stall, r.StallP99.Round(time.Microsecond), r.OverBudget)
	fmt.Fprintf(w, "longest call:       %s\n", r.LongestCall.Round(time.Microsecond))
	if len(r.Stopped) > 0 {
		fmt.Fprintf(w, "stopped at the free-memory margin (%s) on numa %s\n", opts.Margin, locality.FormatNodeList(r.Stopped))
	}
	for _, p := range r.Processes {
		var parts []string
		for _, m := range p.Moved {
			parts = append(parts, fmt.Sprintf("%d pages %d->%d", m.Pages, m.From, m.To))
		}
		switch {
		case p.Err != "":
			parts = append(parts, "failed: "+p.Err)
		case p.Skipped != "":
			parts = append(parts, "skipped: "+p.Skipped)
		}
		if p.Busy > 0 {
			parts = append(parts, fmt.Sprintf("%d pages still busy", p.Busy))
		}
		if p.Shared > 0 {
			parts = append(parts, fmt.Sprintf("%d shared pages left", p.Shared))
		}
		if p.Unhidden > 0 {
			parts = append(parts, fmt.Sprintf("%d pages unhidden from NUMA balancing", p.Unhidden))
		}
		if p.Note != "" {
			parts = append(parts, p.Note)
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "pid %d: %s\n", p.PID, strings.Join(parts, ", "))
		}
	}
	return nil
}

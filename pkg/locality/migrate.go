package locality

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/sloconfig"
)

// Strategy is how pages are moved.
type Strategy string

const (
	// StrategyMovePages moves listed pages with move_pages(2) in batches
	// sized to the stall budget. The default: stalls stay bounded.
	StrategyMovePages Strategy = "move_pages"
	// StrategyMigratePages moves a whole process node to node with one
	// migrate_pages(2) call per target: fewer calls, unbounded stall.
	StrategyMigratePages Strategy = "migrate_pages"
)

// Defaults of Options.
const (
	DefaultBudget  = 20 * time.Millisecond
	DefaultRetries = 3
)

// Options tune a migration.
type Options struct {
	ProcRoot  string // "" means /proc
	SysfsRoot string // "" means /sys
	Strategy  Strategy
	// Budget bounds what a thread of the workload waits for while its
	// memory moves (default 20 ms): with Stall StallPage (the default) the
	// move of the kernel's unit, one page or batch, and a call that holds
	// the mmap lock throughout (migrate_pages(2)) whole; with StallCall
	// every single call.
	Budget time.Duration
	Stall  StallBound
	// Margin is the free memory every target node keeps; the zero value
	// means DefaultMargin.
	Margin Margin
	// Retries is how often busy pages are tried again (default 3).
	Retries int
	// FreeMemory reads the size and free memory of nodes now; nil reads
	// sysfs. The migrator checks it before every batch, not only in the plan.
	FreeMemory func(nodes []int) (map[int]NodeMemory, error)
}

func (o Options) normalized() Options {
	if o.Strategy == "" {
		o.Strategy = StrategyMovePages
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.Stall == "" {
		o.Stall = StallPage
	}
	if o.Margin == (Margin{}) {
		o.Margin = DefaultMargin
	}
	if o.Retries <= 0 {
		o.Retries = DefaultRetries
	}
	if o.FreeMemory == nil {
		root := o.SysfsRoot
		o.FreeMemory = func(nodes []int) (map[int]NodeMemory, error) { return ReadNodeMemory(root, nodes) }
	}
	return o
}

// Request names the processes to migrate and their local nodes.
type Request struct {
	PIDs   []int
	Local  []int
	Policy sloconfig.LocalityPolicy // "" migrates (bestEffort); none skips
	// Nodes are the machine's memory nodes; nil reads them from sysfs.
	Nodes []int
}

// Result is what a migration did.
type Result struct {
	Strategy Strategy
	Stall    StallBound // what the budget bounded (move_pages)
	Local    []int
	Skipped  string // why nothing was tried (ReasonNoTargetNUMA, ...)
	// Before and After are the processes' pages per node around the run.
	Before, After NodePages
	RatioBefore   int
	RatioAfter    int
	Moved         uint64 // pages moved
	RemoteLeft    uint64 // pages still on remote nodes afterwards
	PageSize      uint64 // bytes per page
	Elapsed       time.Duration
	Calls         int
	// LongestStall is the longest wait a call made a thread of the workload
	// wait, by the stall bound (BatchController.Wait): the call's share per
	// unit with StallPage, the whole call with StallCall or for a
	// migrate_pages(2) call. StallP99 is the 99th percentile of the calls'
	// waits, LongestCall the longest call and CallTime the calls' sum.
	LongestStall time.Duration
	StallP99     time.Duration
	LongestCall  time.Duration
	CallTime     time.Duration
	// OverBudget counts the calls whose wait was over the budget: a huge
	// page that alone outlasts it, or a call slowed by the rest of the
	// machine.
	OverBudget int
	Stopped    []int // local nodes where the margin ended the move
	Processes  []ProcessResult
}

// MovedBytes is Moved in bytes.
func (r Result) MovedBytes() uint64 { return r.Moved * r.PageSize }

// Throughput is the rate of the move in MB/s (MB = 2^20 bytes, as numastat
// counts), 0 when nothing moved.
func (r Result) Throughput() float64 {
	if r.Moved == 0 || r.Elapsed <= 0 {
		return 0
	}
	return float64(r.MovedBytes()) / (1 << 20) / r.Elapsed.Seconds()
}

// Failures lists the processes that failed, for the Event.
func (r Result) Failures() []ProcessFailure {
	var out []ProcessFailure
	for _, p := range r.Processes {
		if p.Err != "" {
			out = append(out, ProcessFailure{PID: p.PID, Err: p.Err})
		}
	}
	return out
}

// Migrate measures the processes, plans and moves their remote memory to
// the local nodes, and measures again. Processes that exit before or during
// the run are reported as failed ("No such process"); the others complete.
func Migrate(ctx context.Context, req Request, opts Options) (Result, error) {
	opts = opts.normalized()
	reader := Reader{ProcRoot: opts.ProcRoot}
	pageSize := uint64(os.Getpagesize())
	nodes := req.Nodes
	if nodes == nil {
		var err error
		if nodes, err = MemoryNodes(opts.SysfsRoot); err != nil {
			return Result{}, err
		}
	}
	mems, gone, err := reader.Processes(req.PIDs)
	if err != nil {
		return Result{}, err
	}
	mem, err := opts.FreeMemory(nodes)
	if err != nil {
		return Result{}, fmt.Errorf("read free memory of numa nodes: %w", err)
	}
	in := PlanInput{Policy: req.Policy, Local: req.Local, Nodes: mem, Margin: opts.Margin, PageSize: pageSize}
	for _, pm := range mems {
		in.Processes = append(in.Processes, pm.Summary(req.Local))
	}
	plan, err := MakePlan(in)
	if err != nil {
		return Result{}, err
	}
	res := Result{Strategy: opts.Strategy, Local: plan.Local, Skipped: plan.Skipped, PageSize: pageSize, Before: Sum(mems)}
	if plan.Skipped == "" {
		res = Execute(ctx, plan, opts)
		res.Before, res.PageSize = Sum(mems), pageSize
	}
	for _, pid := range gone {
		res.Processes = append(res.Processes, ProcessResult{PID: pid, Err: Strerror(ErrNoProcess)})
	}
	slices.SortFunc(res.Processes, func(a, b ProcessResult) int { return a.PID - b.PID })
	after, _, err := reader.Processes(req.PIDs)
	if err != nil {
		return res, err
	}
	res.After = Sum(after)
	res.RatioBefore, res.RatioAfter = LocalRatio(res.Before, plan.Local), LocalRatio(res.After, plan.Local)
	res.RemoteLeft = res.After.Remote(plan.Local)
	return res, nil
}

// Execute carries out a plan. It measures nothing before or after; Migrate
// does.
func Execute(ctx context.Context, plan Plan, opts Options) Result {
	opts = opts.normalized()
	res := Result{Strategy: opts.Strategy, Stall: opts.Stall, Local: plan.Local, Skipped: plan.Skipped, PageSize: uint64(os.Getpagesize())}
	start := time.Now()
	ctl := NewBatchController(opts.Budget, 256, 16, 1<<16)
	ctl.Stall, ctl.UnitPages = opts.Stall, KernelUnitPages(kernelRelease())
	if fixedBatch > 0 {
		// Bounds of fixedBatch hold every size there, and a budget of 1 ns
		// keeps finishWhole's migrate_pages(2) out.
		ctl = NewBatchController(time.Nanosecond, fixedBatch, fixedBatch, fixedBatch)
	}
	var stalls []time.Duration
	for _, pp := range plan.Processes {
		if pp.Skipped != "" || len(pp.Moves) == 0 {
			if pp.Skipped != "" || pp.Remote > 0 {
				res.Processes = append(res.Processes, ProcessResult{PID: pp.PID, Skipped: pp.Skipped, Strategy: opts.Strategy})
			}
			continue
		}
		var pr ProcessResult
		if opts.Strategy == StrategyMigratePages {
			pr = migrateWhole(ctx, pp, plan, opts, ctl)
		} else {
			pr = moveProcess(ctx, pp, plan, opts, ctl)
		}
		res.Processes = append(res.Processes, pr)
		res.Calls += pr.Calls
		res.LongestStall = max(res.LongestStall, pr.LongestStall)
		res.LongestCall = max(res.LongestCall, pr.LongestCall)
		res.CallTime += pr.CallTime
		stalls = append(stalls, pr.stalls...)
		for _, m := range pr.Moved {
			res.Moved += m.Pages
		}
		for _, n := range pr.Stopped {
			if !slices.Contains(res.Stopped, n) {
				res.Stopped = append(res.Stopped, n)
			}
		}
	}
	for _, n := range plan.Stopped {
		if !slices.Contains(res.Stopped, n) {
			res.Stopped = append(res.Stopped, n)
		}
	}
	slices.Sort(res.Stopped)
	res.StallP99 = percentile(stalls, 99)
	for _, d := range stalls {
		if d > opts.Budget {
			res.OverBudget++
		}
	}
	res.Elapsed = time.Since(start)
	return res
}

// percentile is the p-th percentile of ds (nearest rank), 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)*p+99)/100-1]
}

// MemoryNodes lists the NUMA nodes that have memory, from sysfs
// (node/has_memory, else node/online); a machine without the node directory
// has node 0 only.
func MemoryNodes(sysfsRoot string) ([]int, error) {
	if sysfsRoot == "" {
		sysfsRoot = "/sys"
	}
	dir := filepath.Join(sysfsRoot, "devices/system/node")
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return []int{0}, nil
	}
	for _, name := range []string{"has_memory", "online"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		nodes, err := ParseNodeList(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		return nodes, nil
	}
	return nil, fmt.Errorf("%s: neither has_memory nor online exists", dir)
}

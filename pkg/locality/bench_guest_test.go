//go:build linux

package locality

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchRun is one move of a fresh 256 MiB child from node 1 to node 0.
type benchRun struct {
	tool    string
	mb      float64       // MiB moved
	elapsed time.Duration // the move (locus: Execute; migratepages: the command)
	total   time.Duration // locus: measure, plan, move and measure again
	longest time.Duration // longest wait by the stall bound (the call, but with StallPage)
	// longestCall is the longest single call.
	longestCall time.Duration
	p99         time.Duration
	calls       int
	hugeMB      float64 // the child's transparent huge pages before the move
	// hugeAfterMB is the same after the move: less means the kernel split
	// huge pages on the way and moved their base pages one by one.
	hugeAfterMB float64
	noopExec    time.Duration
	callTime    time.Duration
	trace       string // per class: calls, MiB, time in calls
	// overBudget counts locus's calls over its budget.
	overBudget int
	// wait is what the process's probe saw during the tool's whole run
	// (locus: measure, plan, move and measure again; migratepages: the
	// command), base the same for as long just before it.
	wait, base probeWaits
}

func (b benchRun) mbps() float64 { return b.mb / b.elapsed.Seconds() }

// unbounded stands for "no budget": batches grow to the controller's maximum.
const unbounded = 24 * time.Hour

// TestGuestBenchLocusVsMigratepages moves the same 256 MiB of one running
// process (allocated on node 1, pinned to node 0's CPUs, one thread touching
// it) from node 1 to node 0 with each tool in turn, in the same boot: locus
// at several stall budgets, locus's migrate_pages strategy and numactl's
// migratepages. Before each tool, an untimed migrate_pages(2) puts the
// process's memory back on node 1, so every tool moves the same pages of the
// same process. Each round has its own process and a shuffled order, so no
// tool always runs first.
//
// LOCUS_NUMAVM_BENCH_BUDGETS lists budgets in ms (0: unbounded; default
// "20,0"), LOCUS_NUMAVM_BENCH_ROUNDS the rounds (default 1) and
// LOCUS_NUMAVM_BENCH_PAGES the workloads, thp (memory in transparent huge
// pages, the default) and/or 4k (madvised against them); pass them as
// --append "numavm.bench_budgets=20,50,100,0 numavm.bench_rounds=5 numavm.bench_pages=thp,4k".
// LOCUS_NUMAVM_BENCH_PIN=1 runs every tool from node 1's CPUs (see pinMover).
// LOCUS_NUMAVM_BENCH_CMDS adds `locus migrate` commands at the first budget
// (see benchCommandTools), to compare two builds in one boot.
// LOCUS_NUMAVM_BENCH_CALL=1 adds each budget with StallCall
// (locus-budgetN-call) beside the default StallPage.
// LOCUS_NUMAVM_BENCH_FIXED ("16,64,all") adds locus with every call of that
// many huge pages' worth of base pages (all: the controller's maximum, 256
// MiB), whatever the calls take.
//
// The process runs the wait probe (probe_test.go): each run line gives the
// longest gap between two touches of its thread, the longest single touch
// and the longest mmap and munmap during the tool's run (wait_*), and the same
// over the second before it (base_*).
func TestGuestBenchLocusVsMigratepages(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	pinMover(t, topo)
	cpus := nodeCPUs(t, topo, 0)
	tools := []string{}
	for _, f := range strings.Split(envOr("LOCUS_NUMAVM_BENCH_BUDGETS", "20,0"), ",") {
		tools = append(tools, "locus-budget"+strings.TrimSpace(f))
		if os.Getenv("LOCUS_NUMAVM_BENCH_CALL") == "1" {
			tools = append(tools, "locus-budget"+strings.TrimSpace(f)+"-call")
		}
	}
	tools = append(tools, benchCommandTools()...)
	for _, f := range strings.Split(os.Getenv("LOCUS_NUMAVM_BENCH_FIXED"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			tools = append(tools, "locus-huge"+f)
		}
	}
	tools = append(tools, "locus-migrate_pages")
	mp, err := exec.LookPath("migratepages")
	if err == nil {
		tools = append(tools, "numactl-migratepages")
	} else if os.Getenv(guestEnv) == "1" {
		t.Fatal("the test guest has no migratepages (numactl)")
	}
	rounds, _ := strconv.Atoi(envOr("LOCUS_NUMAVM_BENCH_ROUNDS", "1"))
	for _, pages := range strings.Split(envOr("LOCUS_NUMAVM_BENCH_PAGES", "thp"), ",") {
		huge := map[string]string{"thp": "yes", "4k": "no"}[pages]
		if huge == "" {
			t.Fatalf("LOCUS_NUMAVM_BENCH_PAGES: %q is not thp or 4k", pages)
		}
		benchWorkload(t, pages, huge, tools, mp, cpus, max(rounds, 1))
	}
}

// benchWorkload runs every tool once per round on a process whose memory is
// in huge pages (huge "yes") or base pages ("no"), and prints a line per run
// and a summary per tool.
func benchWorkload(t *testing.T, pages, huge string, tools []string, mp, cpus string, rounds int) {
	byTool := map[string][]benchRun{}
	for r := 0; r < rounds; r++ {
		c := startChild(t, childSpec{mb: 256, bind: 1, cpus: cpus, threads: 1, huge: huge, probe: true})
		order := slices.Clone(tools)
		rand.New(rand.NewPCG(uint64(r), 1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for i, tool := range order {
			if _, err := migratePagesPrivate(c.pid(), []int{0}, []int{1}); err != nil {
				t.Fatalf("put the memory back on node 1: %v", err)
			}
			requireOn(t, c, 1)
			if i == 0 {
				move, query := fixedCallCost(t, c)
				fmt.Printf("LOCALITY-BENCH-CALL: pages=%s round=%d noop_move_ms=%.2f query_ms=%.2f\n", pages, r+1, ms(move), ms(query))
			}
			run := benchOne(t, c, tool, mp)
			byTool[tool] = append(byTool[tool], run)
			fmt.Printf("LOCALITY-BENCH: pages=%s round=%d tool=%s mb=%.1f huge_mb=%.0f huge_after_mb=%.0f seconds=%.3f total_seconds=%.3f mbps=%.1f calls=%d over_budget=%d longest_stall_ms=%.2f p99_stall_ms=%.2f noop_exec_ms=%.2f call_s=%.3f%s%s\n",
				pages, r+1, tool, run.mb, run.hugeMB, run.hugeAfterMB, run.elapsed.Seconds(), run.total.Seconds(), run.mbps(), run.calls, run.overBudget,
				ms(run.longest), ms(run.p99), ms(run.noopExec), run.callTime.Seconds(), run.trace, probeFields(run))
		}
		c.kill()
	}
	base := byTool[tools[len(tools)-1]] // migratepages when present
	for _, tool := range tools {
		runs := byTool[tool]
		var rates, ratios []float64
		var longest time.Duration
		for i, r := range runs {
			rates = append(rates, r.mbps())
			ratios = append(ratios, r.mbps()/base[i].mbps())
			longest = max(longest, r.longest)
		}
		// The best run of each tool is the one the host's other load
		// disturbed least, so best against best is the steadiest ratio.
		var baseRates []float64
		for _, r := range base {
			baseRates = append(baseRates, r.mbps())
		}
		fmt.Printf("LOCALITY-BENCH: summary pages=%s tool=%s rounds=%d median_mbps=%.1f best_mbps=%.1f best_ratio=%.2f median_ratio=%.2f (%.2f-%.2f) vs %s max_stall_ms=%.1f median_p99_stall_ms=%.1f median_seconds=%.2f\n",
			pages, tool, len(runs), median(rates), slices.Max(rates), slices.Max(rates)/slices.Max(baseRates),
			median(ratios), slices.Min(ratios), slices.Max(ratios), tools[len(tools)-1],
			ms(longest), medianOf(runs, func(r benchRun) float64 { return ms(r.p99) }),
			medianOf(runs, func(r benchRun) float64 { return r.elapsed.Seconds() }))
	}
}

// fixedCallCost is what one move_pages call costs the kernel with nothing
// to move: the median of 21 calls asking for one page of the child's
// region to go to node 1, where it is (the kernel still sets up a move:
// it drains the per-CPU LRU caches of every CPU), and of 21 status
// queries of that page. It bounds the throughput of calls under a budget.
func fixedCallCost(t *testing.T, c *child) (move, query time.Duration) {
	t.Helper()
	addrs, nodes, status := []uintptr{c.addr}, []int32{1}, []int32{0}
	var moves, queries []time.Duration
	for range 21 {
		start := time.Now()
		if err := movePages(c.pid(), addrs, nodes, status, 0); err != nil {
			t.Fatalf("no-op move_pages: %v", err)
		}
		moves = append(moves, time.Since(start))
		start = time.Now()
		if err := queryPages(c.pid(), addrs, status); err != nil {
			t.Fatalf("query: %v", err)
		}
		queries = append(queries, time.Since(start))
	}
	if status[0] != 1 {
		t.Fatalf("the page is on node %d, want 1", status[0])
	}
	return percentile(moves, 50), percentile(queries, 50)
}

// benchOne moves the child's memory from node 1 to node 0 with one tool and
// checks it arrived intact.
func benchOne(t *testing.T, c *child, tool, migratepages string) benchRun {
	t.Helper()
	run := benchRun{tool: tool, hugeMB: anonHugeMB(t, c.pid())}
	// The baseline: what the process waits for at this load with nothing
	// moving, over as long as a move takes.
	c.probe(t)
	time.Sleep(probeBaseline)
	run.base = c.probe(t)
	if path, args, budget, ok := benchCommand(tool); ok {
		return benchLocusCommand(t, c, run, path, args, budget)
	}
	if tool == "numactl-migratepages" {
		before, err := Reader{}.Process(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		// The same command with nothing to move: the cost of starting it.
		start := time.Now()
		if out, err := exec.Command(migratepages, itoa(c.pid()), "0", "0").CombinedOutput(); err != nil {
			t.Fatalf("migratepages (no-op): %v: %s", err, out)
		}
		run.noopExec = time.Since(start)
		if mid, err := (Reader{}).Process(c.pid()); err != nil || mid.Pages[1]+512 < before.Pages[1] {
			t.Fatalf("migratepages 0 0 moved pages: node 1 had %d, now %d (%v)", before.Pages[1], mid.Pages[1], err)
		}
		c.probe(t) // the no-op command's waits are not the move's
		start = time.Now()
		out, err := exec.Command(migratepages, itoa(c.pid()), "1", "0").CombinedOutput()
		run.elapsed = time.Since(start)
		if err != nil {
			t.Fatalf("migratepages: %v: %s", err, out)
		}
		after, err := Reader{}.Process(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		run.mb = float64(before.Pages[1]-after.Pages[1]) * 4096 / (1 << 20)
		// One migrate_pages call: its stall is the whole run.
		run.total, run.longest, run.longestCall, run.p99, run.calls = run.elapsed, run.elapsed, run.elapsed, run.elapsed, 1
	} else {
		opts := Options{Margin: guestMargin, Strategy: StrategyMovePages}
		if tool == "locus-migrate_pages" {
			opts.Strategy = StrategyMigratePages
		} else if !strings.HasPrefix(tool, "locus-huge") {
			budget, call := strings.CutSuffix(strings.TrimPrefix(tool, "locus-budget"), "-call")
			if call {
				opts.Stall = StallCall
			}
			n, err := strconv.Atoi(budget)
			if err != nil {
				t.Fatalf("budget of %s: %v", tool, err)
			}
			opts.Budget = time.Duration(n) * time.Millisecond
			if n == 0 {
				opts.Budget = unbounded
			}
		}
		var tr [2]struct {
			calls, pages int
			took         time.Duration
		}
		traceCall = func(k PageClass, _, pages int, took time.Duration) {
			tr[k].calls++
			tr[k].pages += pages
			tr[k].took += took
		}
		if n, ok := strings.CutPrefix(tool, "locus-huge"); ok {
			fixedBatch = 1 << 16 // all: the controller's maximum
			if n != "all" {
				fixedBatch = atoi(n) * 512
			}
			if fixedBatch <= 0 {
				t.Fatalf("LOCUS_NUMAVM_BENCH_FIXED: %q is not a number of huge pages or all", n)
			}
			defer func() { fixedBatch = 0 }()
		}
		phases := map[string]time.Duration{}
		counts := map[string]int{}
		tracePhaseHook = func(name string, took time.Duration) { phases[name] += took; counts[name]++ }
		defer func() { traceCall, tracePhaseHook = nil, nil }()
		start := time.Now()
		res, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: []int{0}}, opts)
		run.total = time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Failures(); len(f) > 0 {
			t.Fatalf("%s: failures %v", tool, f)
		}
		run.mb, run.elapsed = float64(res.MovedBytes())/(1<<20), res.Elapsed
		run.longest, run.longestCall, run.p99, run.calls, run.callTime = res.LongestStall, res.LongestCall, res.StallP99, res.Calls, res.CallTime
		run.overBudget = res.OverBudget
		for _, name := range []string{"regions", "assign", "query", "guard"} {
			run.trace += fmt.Sprintf(" %s_n=%d %s_s=%.3f", name, counts[name], name, phases[name].Seconds())
		}
		for k, name := range []string{"base", "huge"} {
			run.trace += fmt.Sprintf(" %s_calls=%d %s_mb=%.1f %s_call_s=%.3f", name, tr[k].calls, name, float64(tr[k].pages)/256, name, tr[k].took.Seconds())
		}
	}
	run.wait = c.probe(t) // before the checks, which touch the memory too
	requireOn(t, c, 0)
	requireIntact(t, c)
	run.hugeAfterMB = anonHugeMB(t, c.pid())
	return run
}

//go:build linux

package locality

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchRun is one way of moving the same 256 MiB from node 1 to node 0.
type benchRun struct {
	name    string
	mb      float64
	elapsed time.Duration
	stall   time.Duration // longest single call
	calls   int
}

func (b benchRun) mbps() float64 { return b.mb / b.elapsed.Seconds() }

// TestGuestBenchLocusVsMigratepages moves 256 MiB from node 1 to node 0 in
// the same boot with locus's move_pages strategy, its migrate_pages strategy
// and numactl's migratepages (when installed), and prints one
// machine-readable LOCALITY-BENCH line per run plus a summary line.
func TestGuestBenchLocusVsMigratepages(t *testing.T) {
	topo := multiNode(t)
	quietBalancer(t)
	const mb = 256
	cpus := nodeCPUs(t, topo, 0)
	var runs []benchRun
	// An emulated guest copies memory tens of times slower than hardware, so
	// one 2 MiB huge page alone can outlast the default budget; the scaled
	// budget shows the batching at the same proportions.
	for _, v := range []struct {
		s      Strategy
		budget time.Duration
	}{{StrategyMovePages, DefaultBudget}, {StrategyMovePages, 200 * time.Millisecond}, {StrategyMigratePages, 0}} {
		s := v.s
		c := startChild(t, childSpec{mb: mb, bind: 1, cpus: cpus, threads: 1})
		requireOn(t, c, 1)
		res, err := Migrate(context.Background(), Request{PIDs: []int{c.pid()}, Local: []int{0}}, Options{Strategy: s, Budget: v.budget, Margin: guestMargin})
		if err != nil {
			t.Fatal(err)
		}
		requireOn(t, c, 0)
		requireIntact(t, c)
		c.kill()
		name := "locus-" + string(s)
		if v.budget > 0 {
			name += fmt.Sprintf("-budget%dms", v.budget.Milliseconds())
		}
		runs = append(runs, benchRun{name: name, mb: float64(res.MovedBytes()) / (1 << 20),
			elapsed: res.Elapsed, stall: res.LongestStall, calls: res.Calls})
	}
	if path, err := exec.LookPath("migratepages"); err == nil {
		c := startChild(t, childSpec{mb: mb, bind: 1, cpus: cpus, threads: 1})
		requireOn(t, c, 1)
		before, err := Reader{}.Process(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := exec.Command(path, strconv.Itoa(c.pid()), "1", "0").CombinedOutput()
		elapsed := time.Since(start)
		if err != nil {
			t.Fatalf("migratepages: %v: %s", err, out)
		}
		after, _ := Reader{}.Process(c.pid())
		requireOn(t, c, 0)
		requireIntact(t, c)
		c.kill()
		moved := float64(before.Pages[1]-after.Pages[1]) * 4096 / (1 << 20)
		// One migrate_pages call: the stall is the whole run (process start included).
		runs = append(runs, benchRun{name: "numactl-migratepages", mb: moved, elapsed: elapsed, stall: elapsed, calls: 1})
	} else {
		t.Log("migratepages (numactl) not installed: comparing locus's two strategies only")
	}
	for _, r := range runs {
		fmt.Printf("LOCALITY-BENCH: tool=%s mb=%.1f seconds=%.3f mbps=%.1f longest_stall_ms=%.2f calls=%d\n",
			r.name, r.mb, r.elapsed.Seconds(), r.mbps(), float64(r.stall.Microseconds())/1000, r.calls)
	}
	base := runs[len(runs)-1] // migratepages when present, else locus's migrate_pages
	var parts []string
	for _, r := range runs[:len(runs)-1] {
		parts = append(parts, fmt.Sprintf("%s_vs_%s_throughput_ratio=%.2f %s_vs_%s_stall_ratio=%.3f",
			r.name, base.name, r.mbps()/base.mbps(), r.name, base.name, float64(r.stall)/float64(base.stall)))
	}
	fmt.Printf("LOCALITY-BENCH: summary %s\n", strings.Join(parts, " "))
}

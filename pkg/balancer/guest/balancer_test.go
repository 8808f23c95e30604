package guest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/locality"
)

// settleIntervals is the stated bound: four groups placed two per node with
// their memory at least 90 % local within this many balancer intervals.
const settleIntervals = 90

// runAgent starts the standalone agent with the balancer on, for the
// workloads of cgroups parent/<name>, and stops it at cleanup.
func runAgent(t *testing.T, parent string, names []string, resync time.Duration, bo balancerloop.Options) (stateDir string) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"\"\nworkloads:\n")
	for _, n := range names {
		fmt.Fprintf(&sb, "- {name: %s, cgroup: %s/%s, qosClass: LS}\n", n, parent, n)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "host.yaml")
	writeFile(t, cfg, sb.String())
	logs := &logWriter{}
	a, err := agent.New(agent.Options{ConfigFile: cfg, StateDir: filepath.Join(dir, "state"), CgroupVersion: cgroup.V2,
		Resync: resync, Logger: logs.logger(), LocalityMargin: locality.Margin{MinBytes: 32 << 20},
		// Under TCG one move_pages call of a huge page takes over 100 ms
		// (docs/benchmarks.md), so the default 20 ms budget crawls.
		LocalityBudget: 200 * time.Millisecond,
		NUMABalancer:   bo})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctx); err != nil {
			t.Errorf("agent: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		a.Close()
		logs.dump(t)
	})
	return filepath.Join(dir, "state")
}

// TestGuestBalancerSettlesTwoPerNode: four groups, each burning a CPU and
// holding 16 MiB first touched on node 0, end up two per node with every
// group's memory at least 90 % on its node (the two moved to node 1 had all
// theirs remote), within settleIntervals intervals of one second. Then the
// two on node 1 stop and the two on node 0 want a second CPU each: node 0
// overflows into the pool and its groups use well over its two CPUs.
func TestGuestBalancerSettlesTwoPerNode(t *testing.T) {
	inGuest(t)
	parent := subtree(t)
	names := []string{"g0", "g1", "g2", "g3"}
	groups := map[string]*group{}
	for _, n := range names {
		groups[n] = start(t, parent, n, "0-1", guestLocus, "stress", "--cpu", "1", "--memory", "16Mi", "--touch-interval", "1s")
	}
	waitFor(t, 30*time.Second, "memory resident on node 0", func() (bool, string) {
		var s []string
		ok := true
		for _, n := range names {
			m := groups[n].mem(t)
			s = append(s, fmt.Sprintf("%s %v", n, m))
			ok = ok && m[0] >= 15<<20
		}
		return ok, strings.Join(s, "; ")
	})
	state := runAgent(t, parent, names, time.Second, balancerloop.Options{Enabled: true, Interval: time.Second,
		Config: balancer.Config{MinDwell: time.Minute}})
	nodeCPUs := map[string]int{"0-1": 0, "2-3": 1}
	took := waitFor(t, settleIntervals*time.Second, "two groups per node, memory 90 % local", func() (bool, string) {
		per := map[int]int{}
		var s []string
		ok := true
		for _, n := range names {
			g := groups[n]
			cpus, mems := g.file(t, "cpuset.cpus"), g.file(t, "cpuset.mems")
			node, placed := nodeCPUs[cpus]
			local := 0.0
			if placed {
				per[node]++
				local = g.localPercent(t, node)
			}
			s = append(s, fmt.Sprintf("%s cpus %s mems %s local %.0f%%", n, cpus, mems, local))
			// cgroup v2: mems stay wide by default (NarrowMems).
			ok = ok && placed && mems == "0-1" && local >= 90
		}
		return ok && per[0] == 2 && per[1] == 2, strings.Join(s, "; ")
	})
	t.Logf("settled after %s (%.0f intervals of 1 s)", took.Round(100*time.Millisecond), took.Seconds())
	evs, err := eventlog.Read(state)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range evs {
		count[e.Reason]++
	}
	// The second migration may still be finishing once 90 % is home.
	if count["NUMABalancerPlaced"] != 4 || count["MemoryLocalitySuccess"]+count["MemoryLocalityCompleted"] < 1 {
		t.Fatalf("events %v: want 4 placements and the migration of a moved group", count)
	}

	// Node 1's groups stop and node 0's want two CPUs each: node 0
	// overflows into node 1's idle CPUs.
	var busy []*group
	for _, n := range names {
		if groups[n].file(t, "cpuset.cpus") == "2-3" {
			groups[n].signal(t, syscall.SIGSTOP)
			defer groups[n].signal(t, syscall.SIGCONT)
		} else {
			busy = append(busy, groups[n])
			join(t, groups[n], guestLocus, "stress", "--cpu", "1")
		}
	}
	waitFor(t, 10*time.Second, "node 0's groups overflow into the pool", func() (bool, string) {
		a, b := busy[0].file(t, "cpuset.cpus"), busy[1].file(t, "cpuset.cpus")
		return a == "0-3" && b == "0-3", a + " " + b
	})
	u0 := busy[0].usage(t) + busy[1].usage(t)
	begin := time.Now()
	time.Sleep(3 * time.Second)
	used := float64(busy[0].usage(t)+busy[1].usage(t)-u0) / float64(time.Since(begin))
	t.Logf("with node 1 idle, node 0's two groups used %.2f CPUs", used)
	// Kept to node 0 they could use its 2 CPUs at most; how close to all 4
	// they come depends on how much of the host the guest's vCPUs get under
	// TCG (2.91 with other builds on a 2-CPU host), so the bound is between.
	if used < 2.5 {
		t.Fatalf("node 0's groups used %.2f CPUs while node 1 idled, want more than 2.5 of the 4 (node 0 has 2)", used)
	}
	if local := busy[0].localPercent(t, 0); local < 90 {
		t.Fatalf("overflowing, %s has %.0f%% of its memory on node 0: it stays there", busy[0].rel, local)
	}
	evs, _ = eventlog.Read(state)
	found := false
	for _, e := range evs {
		found = found || e.Reason == "NUMABalancerOverflow"
	}
	if !found {
		t.Fatal("no NUMABalancerOverflow event")
	}
}

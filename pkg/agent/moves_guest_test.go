package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/topology"
)

// movers are the movable workloads of the guest's moves tests and the
// memory each fills with a checksummed pattern (`locus stress --verify`,
// which re-checks it every touchInterval and at exit, and exits on a
// mismatch). Tens of MiB: filling and checking hundreds under the
// emulator takes minutes of a loaded host.
var movers = map[string]int{"a": 16, "b": 24, "c": 32}

// movesBootArgs is the boot of the guest's moves tests, for the skip
// message of a boot without four nodes (test/numavm/README.md says the same).
const movesBootArgs = "--nodes 4 --smp 8 --pkgs ./pkg/agent --run 'TestGuestMovesAdmitAWholeNode|TestGuestRebalance|TestGuestNarrowing' --test-timeout 50m --timeout 3300"

// movesReserved is CPU 7, reserved for the whole test: node 3 has one CPU
// to give, the others two.
const movesReserved = "7"

// fragmented starts a, b and c, one on each of NUMA nodes 0, 1 and 2, and
// waits until their memory is resident. The allocator packs single CPUs
// (best fit), so it is steered: every CPU but 0, 2 and 4 is reserved while
// they start. The next config, with movesReserved only, keeps them there
// (an assignment in force stays while its CPUs are not reserved), and
// then no node has two CPUs free (1, 3, 5 and 6 are). It returns where
// each of a, b, c is.
func fragmented(t *testing.T, g *guestAgent, topo *topology.Topology, moves movesSwitch, flags ...string) map[string]cpuset.CPUSet {
	t.Helper()
	g.write(movesHostConfig(g.parent, "1,3,5-7", moves, moverSpecs("")...))
	g.start(flags...)
	// A workload starts before its CPUs are written (the reconcile after
	// its start binds it): wait for both.
	g.pollFor(4*time.Minute, "a, b and c bound to their CPUs with their memory filled", func() bool {
		ck := g.checkpoint()
		for name, mib := range movers {
			cpus := ck.Assignments[name].CPUs
			if cpus.IsEmpty() || !g.cpus(name).Equals(cpus) || !g.filled(name, mib) {
				return false
			}
		}
		return true
	})
	at := map[string]cpuset.CPUSet{}
	held := cpuset.New(7) // movesReserved
	for name := range movers {
		at[name] = g.checkpoint().Assignments[name].CPUs
		held = held.Union(at[name])
	}
	for _, n := range topo.Nodes {
		if free := n.CPUs.Difference(held); free.Size() >= 2 {
			t.Fatalf("setup: node %d has CPUs %s free (a, b, c on %v); the test needs none with two", n.ID, free, at)
		}
	}
	g.step("a, b, c resident on %v", at)
	return at
}

// moverSpecs is a, b and c for movesHostConfig, but skip.
func moverSpecs(skip string) []string {
	var out []string
	for _, name := range []string{"a", "b", "c"} {
		if name != skip {
			out = append(out, name+":1:"+strconv.Itoa(movers[name])+":true")
		}
	}
	return out
}

// wholeNode says whether cpus are two CPUs of one NUMA node.
func wholeNode(topo *topology.Topology, cpus cpuset.CPUSet) bool {
	return cpus.Size() == 2 && len(topo.NodesOf(cpus)) == 1
}

// noTwoOwners fails when two workloads' cpusets share a CPU.
func noTwoOwners(t *testing.T, g *guestAgent, names ...string) {
	t.Helper()
	for i, x := range names {
		for _, y := range names[i+1:] {
			if both := g.cpus(x).Intersection(g.cpus(y)); !both.IsEmpty() {
				t.Errorf("CPUs %s are both %s's and %s's", both, x, y)
			}
		}
	}
}

// TestGuestMovesAdmitAWholeNode is the live move on the real kernel, in a
// guest of 4 NUMA nodes of 2 CPUs (--nodes 4 --smp 8): three movable
// workloads fragment the machine, a fourth needing a whole node arrives.
// "live" moves one and admits the fourth; "killed" SIGKILLs the agent
// between the moved workload's cpuset write and the admitted one's, and
// the restarted agent converges; "recreate" is what users do without
// moves (delete the workload in the way, then start it again), for the
// figures of docs/benchmarks.md, which it logs as FIGURE lines.
func TestGuestMovesAdmitAWholeNode(t *testing.T) {
	parent, topo := fourNodeGuest(t)
	var moved string
	t.Run("live", func(t *testing.T) {
		g := newGuestAgent(t, filepath.Join(parent, "live"), 19411)
		before := fragmented(t, g, topo, movesOn)
		probe := startHiccupProbe(topo.CPUSet().List())
		start := time.Now()
		g.write(movesHostConfig(g.parent, movesReserved, movesOn, append(moverSpecs(""), "d:2:0:false")...))
		g.pollFor(3*time.Minute, "d admitted on a whole node", func() bool { return wholeNode(topo, g.cpus("d")) })
		admitted := time.Since(start)
		g.step("d admitted on %s after %.2f s", g.cpus("d"), admitted.Seconds())
		for name := range movers {
			if !g.cpus(name).Equals(before[name]) {
				moved += name
			}
		}
		if len(moved) != 1 {
			t.Fatalf("moved %q, want one of a, b, c (before %v)", moved, before)
		}
		pid, to := g.pid(moved), g.cpus(moved)
		on, total := g.localOn(moved, topo.NodesOf(to))
		g.step("%s's memory local on %v: %d of %d bytes", moved, topo.NodesOf(to), on, total)
		noTwoOwners(t, g, "a", "b", "c", "d")
		var repinned []eventlog.Event
		g.pollFor(30*time.Second, "the Repinned event", func() bool {
			evs, _ := eventlog.Read(g.state)
			repinned = slices.DeleteFunc(evs, func(e eventlog.Event) bool { return e.Reason != decide.ReasonRepinned })
			return len(repinned) > 0
		})
		if len(repinned) != 1 || repinned[0].Workload != moved || !strings.Contains(repinned[0].Message, "so that d fits") {
			t.Errorf("Repinned events %+v, want one on %s", repinned, moved)
		}
		time.Sleep(2 * time.Second) // the worker's run, reported on the next scrape
		stall, reported := g.metric("locus_memory_migration_longest_stall_seconds", moved)
		away := probe.end()
		if budget := 20*time.Millisecond + away; reported && stall > budget.Seconds() {
			t.Errorf("longest stall %.1f ms, over the 20 ms budget and the %.1f ms a vCPU was away meanwhile", stall*1e3, away.Seconds()*1e3)
		}
		pages, _ := g.metric("locus_memory_pages_migrated_total", moved)
		if !alive(pid) {
			t.Fatalf("%s (pid %d) exited after its move: its checksum no longer matched, see %s", moved, pid, filepath.Dir(g.cfg))
		}
		summary := g.verifiedExit(moved, pid)
		t.Logf("FIGURE live move: d admitted %.2f s after it arrived; %s moved from CPUs %s to %s (%d MiB, %d of %d bytes of its memory now local, %v pages by the worker, longest worker stall %.1f ms reported %v, a vCPU away at most %.1f ms meanwhile); %s never stopped, and at exit: %s",
			admitted.Seconds(), moved, before[moved], to, movers[moved], on, total, pages, stall*1e3, reported, away.Seconds()*1e3, moved, summary)
		g.kill()
	})
	t.Run("killed", func(t *testing.T) {
		g := newGuestAgent(t, filepath.Join(parent, "killed"), 19412)
		// --debug-write-delay sleeps after the checkpoint is saved and
		// between the moved workload's batch and the others': the kill
		// lands after the moved cpuset is written, before the admitted one.
		before := fragmented(t, g, topo, movesOn, "--debug-write-delay", "2s")
		g.write(movesHostConfig(g.parent, movesReserved, movesOn, append(moverSpecs(""), "d:2:0:false")...))
		var mover string
		g.pollFor(3*time.Minute, "a moved cpuset written", func() bool {
			for name := range movers {
				if s := g.cpus(name); !s.IsEmpty() && !s.Equals(before[name]) {
					mover = name
					return true
				}
			}
			return false
		})
		g.kill()
		g.step("killed the agent once %s's cpuset.cpus was %s (was %s); d's is %s", mover, g.cpus(mover), before[mover], g.cpus("d"))
		g.start()
		g.pollFor(3*time.Minute, "d admitted on a whole node after the restart", func() bool { return wholeNode(topo, g.cpus("d")) })
		g.step("d admitted on %s after the restart", g.cpus("d"))
		ck := g.checkpoint()
		for _, name := range []string{"a", "b", "c", "d"} {
			if got := g.cpus(name); !got.Equals(ck.Assignments[name].CPUs) {
				t.Errorf("%s: cpuset.cpus %s, the checkpoint says %s", name, got, ck.Assignments[name].CPUs)
			}
		}
		noTwoOwners(t, g, "a", "b", "c", "d")
		pid := g.pid(mover)
		g.localOn(mover, topo.NodesOf(g.cpus(mover)))
		if !alive(pid) {
			t.Fatalf("%s (pid %d) exited: its checksum no longer matched", mover, pid)
		}
		g.step("%s's memory local, exit: %s", mover, g.verifiedExit(mover, pid))
		g.kill()
	})
	t.Run("recreate", func(t *testing.T) {
		if moved == "" {
			t.Skip("the live move did not say which workload moves")
		}
		g := newGuestAgent(t, filepath.Join(parent, "recreate"), 19413)
		fragmented(t, g, topo, movesOff)
		others := moverSpecs(moved)
		start := time.Now()
		g.write(movesHostConfig(g.parent, movesReserved, movesOff, append(others, "d:2:0:false")...))
		g.pollFor(3*time.Minute, "d admitted on a whole node", func() bool { return wholeNode(topo, g.cpus("d")) })
		admitted := time.Since(start)
		g.write(movesHostConfig(g.parent, movesReserved, movesOff, append(moverSpecs(""), "d:2:0:false")...))
		g.pollFor(3*time.Minute, moved+" started again with its memory filled", func() bool { return g.filled(moved, movers[moved]) })
		back := time.Since(start)
		t.Logf("FIGURE delete and recreate: d admitted %.2f s after %s was deleted; %s ran again with its %d MiB refilled %.2f s after it was deleted (down %.2f s)",
			admitted.Seconds(), moved, moved, movers[moved], back.Seconds(), back.Seconds())
		g.kill()
	})
}

// fourNodeGuest is the moves tests' precondition: cgroup v2 with a parent
// of the test's own, and the guest of 4 NUMA nodes of 2 CPUs; it returns
// both.
func fourNodeGuest(t *testing.T) (string, *topology.Topology) {
	t.Helper()
	parent := realV2(t)
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) != 4 || topo.CPUSet().Size() != 8 {
		// Its own boot, not the default guest's (2 nodes of 2 CPUs).
		t.Skipf("needs 4 NUMA nodes of 2 CPUs (bash test/numavm/run.sh %s), found %d nodes, CPUs %s",
			movesBootArgs, len(topo.Nodes), topo.CPUSet())
	}
	if _, err := os.Stat(guestLocus); err != nil {
		skipOrFail(t, "needs %s: %v", guestLocus, err)
	}
	return parent, topo
}

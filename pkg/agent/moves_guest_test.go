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
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/topology"
)

// movers are the movable workloads of the guest's moves tests and the
// memory each fills with a checksummed pattern (`locus stress --verify`,
// which re-checks it every 200 ms and exits on a mismatch).
var movers = map[string]int{"a": 32, "b": 48, "c": 64}

// fragmented starts a, b and c, each on a NUMA node of its own, by placing
// immovable fillers beside them and removing the fillers: no node has two
// free CPUs (CPU 7 is reserved). It returns where each of a, b, c is.
func fragmented(t *testing.T, g *guestAgent, topo *topology.Topology, moves bool, flags ...string) map[string]cpuset.CPUSet {
	t.Helper()
	g.write(movesHostConfig(g.parent, moves, "a:1:32:true", "a-fill:1:0:false", "b:1:48:true", "b-fill:1:0:false", "c:1:64:true"))
	g.start(flags...)
	g.pollFor(4*time.Minute, "a, b and c started with their memory resident", func() bool {
		for name, mib := range movers {
			if !resident(g.pid(name), uint64(mib)<<20) {
				return false
			}
		}
		return true
	})
	g.write(movesHostConfig(g.parent, moves, "a:1:32:true", "b:1:48:true", "c:1:64:true"))
	g.pollFor(2*time.Minute, "the fillers removed", func() bool {
		ck := g.checkpoint()
		_, fa := ck.Workloads["a-fill"]
		_, fb := ck.Workloads["b-fill"]
		return !fa && !fb
	})
	at := map[string]cpuset.CPUSet{}
	held := cpuset.New(7)
	for name := range movers {
		at[name] = g.checkpoint().Assignments[name].CPUs
		held = held.Union(at[name])
	}
	for _, n := range topo.Nodes {
		if free := n.CPUs.Difference(held); free.Size() >= 2 {
			t.Fatalf("setup: node %d has CPUs %s free (a, b, c on %v); the test needs none with two", n.ID, free, at)
		}
	}
	return at
}

// resident says whether pid has at least want bytes resident.
func resident(pid int, want uint64) bool {
	if pid == 0 {
		return false
	}
	mems, gone, err := locality.Reader{}.Processes([]int{pid})
	return err == nil && len(gone) == 0 && len(mems) == 1 && mems[0].Pages.Total()*uint64(os.Getpagesize()) >= want
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

// localOn waits until ≥ 99 % of pid's memory is on nodes, and returns the
// pages there and in all.
func localOn(t *testing.T, pid int, nodes []int) (on, total uint64) {
	t.Helper()
	pollFor(t, 2*time.Minute, "the moved memory ≥ 99 % on its new node", func() bool {
		on, total = pagesOf(t, pid, nodes)
		return on*100 >= total*99
	})
	return on, total
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
	parent := realV2(t)
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Nodes) != 4 || topo.CPUSet().Size() != 8 {
		// Its own boot, not the default guest's (2 nodes of 2 CPUs).
		t.Skipf("needs 4 NUMA nodes of 2 CPUs (bash test/numavm/run.sh --nodes 4 --smp 8 --pkgs ./pkg/agent --run %s), found %d nodes, CPUs %s",
			t.Name(), len(topo.Nodes), topo.CPUSet())
	}
	if _, err := os.Stat(guestLocus); err != nil {
		skipOrFail(t, "needs %s: %v", guestLocus, err)
	}
	var moved string
	t.Run("live", func(t *testing.T) {
		g := newGuestAgent(t, filepath.Join(parent, "live"), 19411)
		before := fragmented(t, g, topo, true)
		start := time.Now()
		g.write(movesHostConfig(g.parent, true, "a:1:32:true", "b:1:48:true", "c:1:64:true", "d:2:0:false"))
		pollFor(t, 3*time.Minute, "d admitted on a whole node", func() bool { return wholeNode(topo, g.cpus("d")) })
		admitted := time.Since(start)
		for name := range movers {
			if !g.cpus(name).Equals(before[name]) {
				moved += name
			}
		}
		if len(moved) != 1 {
			t.Fatalf("moved %q, want one of a, b, c (before %v)", moved, before)
		}
		pid, to := g.pid(moved), g.cpus(moved)
		on, total := localOn(t, pid, topo.NodesOf(to))
		if !alive(pid) {
			t.Fatalf("%s (pid %d) exited after its move: its checksum no longer matched, see %s", moved, pid, filepath.Dir(g.cfg))
		}
		noTwoOwners(t, g, "a", "b", "c", "d")
		var repinned []eventlog.Event
		pollFor(t, 30*time.Second, "the Repinned event", func() bool {
			evs, _ := eventlog.Read(g.state)
			repinned = slices.DeleteFunc(evs, func(e eventlog.Event) bool { return e.Reason != decide.ReasonRepinned })
			return len(repinned) > 0
		})
		if len(repinned) != 1 || repinned[0].Workload != moved || !strings.Contains(repinned[0].Message, "so that d fits") {
			t.Errorf("Repinned events %+v, want one on %s", repinned, moved)
		}
		time.Sleep(2 * time.Second) // the worker's run, reported on the next scrape
		stall, reported := g.metric("locus_memory_migration_longest_stall_seconds", moved)
		if reported && stall > 0.020 {
			t.Errorf("longest stall %.1f ms, over the 20 ms budget", stall*1e3)
		}
		pages, _ := g.metric("locus_memory_pages_migrated_total", moved)
		t.Logf("FIGURE live move: d admitted %.2f s after it arrived; %s moved from CPUs %s to %s (%d MiB, %d of %d pages now local, %v pages by the worker, longest worker stall %.1f ms reported %v); %s never stopped",
			admitted.Seconds(), moved, before[moved], to, movers[moved], on, total, pages, stall*1e3, reported, moved)
		g.kill()
	})
	t.Run("killed", func(t *testing.T) {
		g := newGuestAgent(t, filepath.Join(parent, "killed"), 19412)
		// --debug-write-delay sleeps after the checkpoint is saved and
		// between the moved workload's batch and the others': the kill
		// lands after the moved cpuset is written, before the admitted one.
		before := fragmented(t, g, topo, true, "--debug-write-delay", "2s")
		g.write(movesHostConfig(g.parent, true, "a:1:32:true", "b:1:48:true", "c:1:64:true", "d:2:0:false"))
		var mover string
		pollFor(t, 3*time.Minute, "a moved cpuset written", func() bool {
			for name := range movers {
				if s := g.cpus(name); !s.IsEmpty() && !s.Equals(before[name]) {
					mover = name
					return true
				}
			}
			return false
		})
		g.kill()
		t.Logf("killed the agent once %s's cpuset.cpus was %s (was %s); d's is %s", mover, g.cpus(mover), before[mover], g.cpus("d"))
		g.start()
		pollFor(t, 3*time.Minute, "d admitted on a whole node after the restart", func() bool { return wholeNode(topo, g.cpus("d")) })
		ck := g.checkpoint()
		for _, name := range []string{"a", "b", "c", "d"} {
			if got := g.cpus(name); !got.Equals(ck.Assignments[name].CPUs) {
				t.Errorf("%s: cpuset.cpus %s, the checkpoint says %s", name, got, ck.Assignments[name].CPUs)
			}
		}
		noTwoOwners(t, g, "a", "b", "c", "d")
		pid := g.pid(mover)
		localOn(t, pid, topo.NodesOf(g.cpus(mover)))
		if !alive(pid) {
			t.Fatalf("%s (pid %d) exited: its checksum no longer matched", mover, pid)
		}
		g.kill()
	})
	t.Run("recreate", func(t *testing.T) {
		if moved == "" {
			t.Skip("the live move did not say which workload moves")
		}
		g := newGuestAgent(t, filepath.Join(parent, "recreate"), 19413)
		fragmented(t, g, topo, false)
		var others []string
		for _, name := range []string{"a", "b", "c"} {
			if name != moved {
				others = append(others, name+":1:"+strconv.Itoa(movers[name])+":true")
			}
		}
		start := time.Now()
		g.write(movesHostConfig(g.parent, false, append(others, "d:2:0:false")...))
		pollFor(t, 3*time.Minute, "d admitted on a whole node", func() bool { return wholeNode(topo, g.cpus("d")) })
		admitted := time.Since(start)
		g.write(movesHostConfig(g.parent, false, append(others, moved+":1:"+strconv.Itoa(movers[moved])+":true", "d:2:0:false")...))
		pollFor(t, 3*time.Minute, moved+" started again with its memory filled", func() bool { return resident(g.pid(moved), uint64(movers[moved])<<20) })
		back := time.Since(start)
		t.Logf("FIGURE delete and recreate: d admitted %.2f s after %s was deleted; %s ran again with its %d MiB refilled %.2f s after it was deleted (down %.2f s)",
			admitted.Seconds(), moved, moved, movers[moved], back.Seconds(), back.Seconds())
		g.kill()
	})
}

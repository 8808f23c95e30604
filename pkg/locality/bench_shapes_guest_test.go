//go:build linux

package locality

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

// TestGuestBenchCallShapes times the kernel alone moving the same 256 MiB
// of transparent huge pages from node 1 to node 0, called in different
// shapes: move_pages(2) naming every 2 MiB-aligned head in one call, in
// calls of 4 heads and of 1, and migrate_pages(2); each with the process's
// thread touching its memory and without. No planning, no queries: what a
// huge page costs per call shape is what bounds the migrator under a
// budget. Run with --append "numavm.bench_shapes=1 numavm.bench_rounds=N"
// (bench/locality/shapes.sh).
func TestGuestBenchCallShapes(t *testing.T) {
	if os.Getenv("LOCUS_NUMAVM_BENCH_SHAPES") != "1" {
		t.Skip("a benchmark: bench/locality/shapes.sh")
	}
	topo := multiNode(t)
	quietBalancer(t)
	rounds := max(atoi(envOr("LOCUS_NUMAVM_BENCH_ROUNDS", "1")), 1)
	pinMover(t, topo)
	for r := 1; r <= rounds; r++ {
		for _, threads := range []int{1, 0} {
			c := startChild(t, childSpec{mb: 256, bind: 1, cpus: nodeCPUs(t, topo, 0), threads: threads, huge: "yes"})
			heads := hugeHeads(c)
			shapes := []int{len(heads), 4, 1, 0}
			// Each round starts with another shape: none always runs first.
			shapes = append(shapes[r%4:], shapes[:r%4]...)
			for _, shape := range shapes {
				if _, err := migratePagesPrivate(c.pid(), []int{0}, []int{1}); err != nil {
					t.Fatal(err)
				}
				requireOn(t, c, 1)
				huge := anonHugeMB(t, c.pid())
				took, calls := moveShape(t, c, heads, shape)
				name := fmt.Sprintf("move_pages-%d", shape)
				if shape == 0 {
					name = "migrate_pages"
				}
				fmt.Printf("LOCALITY-SHAPE: round=%d touching=%d shape=%s calls=%d huge_mb=%.0f seconds=%.3f ms_per_2mib=%.2f\n",
					r, threads, name, calls, huge, took.Seconds(), ms(took)/float64(len(heads)))
			}
			requireIntact(t, c)
			c.kill()
		}
	}
}

// hugeHeads lists the 2 MiB-aligned addresses of the child's region.
func hugeHeads(c *child) []uintptr {
	const huge = 2 << 20
	var out []uintptr
	for a := (c.addr + huge - 1) &^ (huge - 1); a+huge <= c.addr+uintptr(c.bytes); a += huge {
		out = append(out, a)
	}
	return out
}

// moveShape moves the heads to node 0 in calls of n heads (0: one
// migrate_pages call) and returns the time in calls.
func moveShape(t *testing.T, c *child, heads []uintptr, n int) (time.Duration, int) {
	t.Helper()
	if n == 0 {
		start := time.Now()
		if _, err := migratePagesPrivate(c.pid(), []int{1}, []int{0}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start), 1
	}
	var took time.Duration
	calls := 0
	for i := 0; i < len(heads); i += n {
		batch := heads[i:min(i+n, len(heads))]
		nodes, status := make([]int32, len(batch)), make([]int32, len(batch))
		start := time.Now()
		if err := movePages(c.pid(), batch, nodes, status, 0); err != nil {
			t.Fatal(err)
		}
		took += time.Since(start)
		calls++
	}
	return took, calls
}

// pinMover puts every thread of this process (the one making the calls) on
// node 1's CPUs when LOCUS_NUMAVM_BENCH_PIN is 1, away from the child's
// CPUs on node 0, as an agent runs on CPUs of its own; all CPUs again when
// the test ends.
func pinMover(t *testing.T, topo *topology.Topology) {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM_BENCH_PIN") != "1" {
		return
	}
	if err := pinAllThreads(nodeCPUs(t, topo, 1)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pinAllThreads(topo.CPUSet().String()) })
}

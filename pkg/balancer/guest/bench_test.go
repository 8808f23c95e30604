package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/balancerloop"
)

// The benchmark's workload is this test binary run again as a child (the
// guest has no sysbench): BALANCER_BENCH_CHILD=FILE:MIB:THREADS makes it
// write 1 KiB blocks over a MIB buffer from THREADS threads, as
// `sysbench memory` does, and keep the count of blocks written in FILE.

func TestMain(m *testing.M) {
	if spec := os.Getenv("BALANCER_BENCH_CHILD"); spec != "" {
		benchChild(spec)
		return
	}
	os.Exit(m.Run())
}

func benchChild(spec string) {
	f := strings.Split(spec, ":")
	mib, _ := strconv.Atoi(f[1])
	threads, _ := strconv.Atoi(f[2])
	buf := make([]byte, mib<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	var events atomic.Int64
	per := len(buf) / threads
	for t := range threads {
		go func(part []byte) {
			runtime.LockOSThread()
			var block [1024]byte
			for n := byte(0); ; n++ {
				for off := 0; off+len(block) <= len(part); off += len(block) {
					block[0] = n
					copy(part[off:], block[:])
					events.Add(1)
				}
			}
		}(buf[t*per : (t+1)*per])
	}
	for {
		time.Sleep(200 * time.Millisecond)
		_ = os.WriteFile(f[0]+".tmp", []byte(strconv.FormatInt(events.Load(), 10)), 0o644)
		_ = os.Rename(f[0]+".tmp", f[0])
	}
}

func benchEnabled(t *testing.T) {
	t.Helper()
	inGuest(t)
	if os.Getenv("LOCUS_NUMAVM_BALANCER_BENCH") != "1" {
		t.Skip("benchmark: run bench/balancer/run.sh")
	}
}

type benchGroup struct {
	*group
	count string
}

func (b benchGroup) events(t *testing.T) int64 {
	t.Helper()
	for range 20 {
		if raw, err := os.ReadFile(b.count); err == nil {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				return n
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: no event count in %s", b.rel, b.count)
	return 0
}

// expectedLocal is the share of accesses expected to be local: a thread on
// a CPU of its cpuset, picked evenly, touching its memory, picked evenly.
func expectedLocal(t *testing.T, g *group) float64 {
	cpus := g.file(t, "cpuset.cpus.effective")
	onNode := map[int]float64{}
	set := map[string][]int{"0-1": {0}, "2-3": {1}, "0-3": {0, 1}}[cpus]
	for _, n := range set {
		onNode[n] = 1 / float64(len(set))
	}
	m := g.mem(t)
	var total, local float64
	for n, b := range m {
		total += float64(b)
		local += float64(b) * onNode[n]
	}
	return 100 * local / total
}

// waitSettled waits until the agent's balancer record lists every group as
// settled; false if it did not within d.
func waitSettled(t *testing.T, stateDir string, names []string, d time.Duration) bool {
	for begin := time.Now(); time.Since(begin) < d; time.Sleep(time.Second) {
		raw, err := os.ReadFile(filepath.Join(stateDir, balancerloop.File))
		if err != nil {
			continue
		}
		var rec struct{ Settled map[string]string }
		if json.Unmarshal(raw, &rec) != nil {
			continue
		}
		n := 0
		for _, name := range names {
			if rec.Settled[name] != "" {
				n++
			}
		}
		if n == len(names) {
			return true
		}
	}
	return false
}

// TestGuestBalancerBench runs four memory-bandwidth groups of two threads
// each on the four CPUs, shared (the agent without its balancer: every
// group on every CPU) and balanced (the agent's NUMA balancer), rounds
// interleaved, and prints events/s and the expected local-access ratios.
func TestGuestBalancerBench(t *testing.T) {
	benchEnabled(t)
	const mib, threads, measure, rounds = 64, 2, 15 * time.Second, 3
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	results := map[string][]float64{}
	locals := map[string][]float64{}
	for round := range rounds {
		for _, mode := range []string{"shared", "balanced"} {
			t.Run(fmt.Sprintf("%s-%d", mode, round), func(t *testing.T) {
				parent := subtree(t)
				var gs []benchGroup
				var names []string
				for i := range 4 {
					name := fmt.Sprintf("m%d", i)
					count := filepath.Join(t.TempDir(), "events")
					g := start(t, parent, name, "0-3", "env",
						fmt.Sprintf("BALANCER_BENCH_CHILD=%s:%d:%d", count, mib, threads), exe)
					gs, names = append(gs, benchGroup{g, count}), append(names, name)
				}
				for _, g := range gs {
					waitFor(t, 30*time.Second, "the child counts", func() (bool, string) {
						_, err := os.Stat(g.count)
						return err == nil, g.out.String()
					})
				}
				// The agent runs in both modes, so both pay for it; only
				// the balancer differs.
				on := mode == "balanced"
				state := runAgent(t, parent, names, 2*time.Second, balancerloop.Options{Enabled: on, Interval: 2 * time.Second,
					Config: balancer.Config{MinDwell: time.Minute}})
				if on {
					took := waitFor(t, 60*time.Second, "two groups per node", func() (bool, string) {
						per := map[string]int{}
						var s []string
						for _, g := range gs {
							c := g.file(t, "cpuset.cpus")
							per[c]++
							s = append(s, c)
						}
						return per["0-1"] == 2 && per["2-3"] == 2, strings.Join(s, " ")
					})
					// Measure the steady state: once the balancer has settled
					// every group (memory home, or given up after its runs),
					// so no migration runs in the window.
					home := time.Now()
					settled := waitSettled(t, state, names, 300*time.Second)
					t.Logf("placed after %s, settled %v after %s more", took.Round(100*time.Millisecond), settled,
						time.Since(home).Round(100*time.Millisecond))
				} else {
					time.Sleep(10 * time.Second) // about as long as placing takes
				}
				before := make([]int64, len(gs))
				for i, g := range gs {
					before[i] = g.events(t)
				}
				begin := time.Now()
				time.Sleep(measure)
				var total, local float64
				for i, g := range gs {
					total += float64(g.events(t) - before[i])
					local += expectedLocal(t, g.group) / float64(len(gs))
				}
				eps := total / time.Since(begin).Seconds()
				results[mode] = append(results[mode], eps)
				locals[mode] = append(locals[mode], local)
				fmt.Printf("BALANCER-BENCH: mode=%s round=%d events/s=%.0f expected-local=%.1f%%\n", mode, round, eps, local)
			})
		}
	}
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	fmt.Printf("BALANCER-BENCH: summary shared=%.0f balanced=%.0f ratio=%.3f local-shared=%.1f%% local-balanced=%.1f%%\n",
		mean(results["shared"]), mean(results["balanced"]), mean(results["balanced"])/mean(results["shared"]),
		mean(locals["shared"]), mean(locals["balanced"]))
}

// Command crash is the kill -9 campaign: the standalone agent, on the real
// cgroup v1 hierarchies of this host but only inside a sub-tree of its own,
// killed with SIGKILL at a uniformly random point 0–2 s after it starts,
// round after round, with the config changed each round. Each round:
//
//  1. start the agent on the previous round's config (from nothing: the
//     previous round restored everything), wait until it has converged,
//     stop it with SIGTERM (workloads keep running, except the one marked
//     stop-on-agent-exit);
//  2. rename the changed config into place, start the agent, SIGKILL it
//     after a random 0–2 s;
//  3. start it again at once and time how long until the state has
//     converged (verifier.converged says exactly what that means);
//  4. rename a config without workloads into place, wait until every
//     original is back (verifier.restored), stop the agent with SIGTERM
//     (exit 0) and check again.
//
// A round that fails keeps the agent's log and state directory under
// WORK/failures/round-N; the sub-tree is then reset by hand (the campaign's
// own originals written back, the state directory emptied) so the next
// round starts clean. run.sh builds locus and runs this.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

type options struct {
	locus, work    string
	rounds         int
	seed           uint64
	maxKill        time.Duration
	settle, resync time.Duration
	timeout        time.Duration
	keep           bool
}

func main() {
	var o options
	flag.StringVar(&o.locus, "locus", "", "the locus binary (required)")
	flag.StringVar(&o.work, "work", "", "work directory (default: a new temporary one, removed at the end unless a round failed)")
	flag.IntVar(&o.rounds, "rounds", 100, "rounds")
	flag.Uint64Var(&o.seed, "seed", 0, "random seed (0: from the clock); the same seed gives the same configs and kill times")
	flag.DurationVar(&o.maxKill, "max-kill", 2*time.Second, "kill the agent at a uniformly random time in [0, this) after its start")
	flag.DurationVar(&o.settle, "config-settle", 200*time.Millisecond, "the agent's --config-settle")
	flag.DurationVar(&o.resync, "resync", 0, "the agent's --resync (0: its default)")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "a round fails when the agent has not converged (or restored) this long after its start")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory and every round's log")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	r, err := run(ctx, o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/crash:", err)
		os.Exit(2)
	}
	if r.failed() {
		os.Exit(1)
	}
}

// report is the campaign's outcome.
type report struct {
	rounds, converged, restored int
	toConverge, toRestore       []time.Duration
	killedEarly                 int // killed before its first status.json
	failures                    []string
	work                        string
	elapsed                     time.Duration
	loadBefore, loadAfter       string // /proc/loadavg: what else the machine ran
}

func (r *report) failed() bool {
	return len(r.failures) > 0 || r.converged < r.rounds || r.restored < r.rounds
}

func (r *report) print(w io.Writer, o options) {
	fmt.Fprintf(w, "\nkill -9 campaign: %d rounds, seed %d, kill at U[0, %s) after start, agent --config-settle %s",
		r.rounds, o.seed, o.maxKill, o.settle)
	if o.resync > 0 {
		fmt.Fprintf(w, " --resync %s", o.resync)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  converged after the restart: %d/%d   time to converge from the restart: p50 %s  p99 %s  max %s\n",
		r.converged, r.rounds, ms(pct(r.toConverge, 50)), ms(pct(r.toConverge, 99)), ms(pct(r.toConverge, 100)))
	fmt.Fprintf(w, "  originals restored at the end of the round: %d/%d   time from the empty config to restored: p50 %s  p99 %s\n",
		r.restored, r.rounds, ms(pct(r.toRestore, 50)), ms(pct(r.toRestore, 99)))
	fmt.Fprintf(w, "  kills before the agent's first status.json: %d/%d\n", r.killedEarly, r.rounds)
	fmt.Fprintf(w, "  %s for the campaign on %d CPUs; load average (1, 5, 15 min) %s before, %s after\n",
		r.elapsed.Round(time.Second), runtime.NumCPU(), r.loadBefore, r.loadAfter)
	for _, f := range r.failures {
		fmt.Fprintf(w, "  FAILED %s\n", f)
	}
	if len(r.failures) > 0 {
		fmt.Fprintf(w, "  evidence (agent logs, state directories): %s/failures\n", r.work)
	}
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s) + 99) / 100
	return s[max(i, 1)-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond)) }

func run(ctx context.Context, o options, out io.Writer) (*report, error) {
	if o.locus == "" {
		return nil, errors.New("-locus is required")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("needs root: it creates cgroups")
	}
	const mount = "/sys/fs/cgroup"
	for _, f := range []string{"cpuset/cpuset.cpus", "memory/memory.soft_limit_in_bytes", "cpu/cpu.shares", "cpuacct/cpuacct.usage"} {
		if _, err := os.Stat(filepath.Join(mount, f)); err != nil {
			return nil, fmt.Errorf("needs the cgroup v1 hierarchies cpuset, memory, cpu and cpuacct under %s: %w", mount, err)
		}
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	if o.work == "" {
		dir, err := os.MkdirTemp("", "locus-crash-")
		if err != nil {
			return nil, err
		}
		o.work = dir
	}
	rep := &report{work: o.work}
	c := &campaign{o: o, cfgFile: filepath.Join(o.work, "config", "host.yaml"), stateDir: filepath.Join(o.work, "state")}
	for _, d := range []string{filepath.Dir(c.cfgFile), filepath.Join(o.work, "rounds")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var external []workload
	for _, w := range universe() {
		if w.External {
			external = append(external, w)
		}
	}
	root := fmt.Sprintf("locus-crash-%d", os.Getpid())
	t, err := makeTree(mount, root, external)
	if t != nil {
		c.t = t
		defer func() {
			if c.agent != nil {
				c.kill9(c.agent)
			}
			if err := t.remove(c.stateDir); err != nil {
				fmt.Fprintln(os.Stderr, "bench/crash: cleanup:", err)
			}
			if !o.keep && !rep.failed() {
				os.RemoveAll(o.work)
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	base, err := t.snapshot()
	if err != nil {
		return nil, err
	}
	c.v = &verifier{t: t, stateDir: c.stateDir, base: base, kernelDefault: map[string]string{}}
	for _, f := range []string{"memory.limit_in_bytes", "memory.soft_limit_in_bytes"} {
		c.v.kernelDefault[f] = base.files["memory/"+root+"/"+f]
	}
	fmt.Fprintf(out, "cgroup sub-tree %s (cpuset, memory, cpu, cpuacct), work directory %s, seed %d\n", root, o.work, o.seed)

	rep.loadBefore = loadavg()
	began := time.Now()
	rng := rand.New(rand.NewPCG(o.seed, 15))
	prev := baseConfig()
	for i := 1; i <= o.rounds; i++ {
		next := mutate(prev, rng)
		kill := time.Duration(rng.Int64N(int64(o.maxKill)))
		res, err := c.round(ctx, i, prev, next, kill)
		if err != nil {
			return rep, err
		}
		rep.rounds++
		line := fmt.Sprintf("round %3d  kill at %5s", i, ms(kill))
		if res.killedEarly {
			rep.killedEarly++
			line += " (before its first status)"
		} else {
			line += " (after its first status) "
		}
		if res.converged {
			rep.converged++
			rep.toConverge = append(rep.toConverge, res.toConverge)
			line += fmt.Sprintf("  converged in %s", ms(res.toConverge))
		} else {
			line += "  NOT CONVERGED"
		}
		if res.restored {
			rep.restored++
			rep.toRestore = append(rep.toRestore, res.toRestore)
			line += fmt.Sprintf("  restored in %s", ms(res.toRestore))
		} else {
			line += "  NOT RESTORED"
		}
		fmt.Fprintf(out, "%s   %s\n", line, next.describe())
		for _, p := range res.problems {
			rep.failures = append(rep.failures, fmt.Sprintf("round %d: %s", i, p))
			fmt.Fprintf(out, "    %s\n", p)
		}
		prev = next
	}
	rep.elapsed, rep.loadAfter = time.Since(began), loadavg()
	rep.print(out, o)
	return rep, nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

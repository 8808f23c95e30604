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
	"os/exec"
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

// campaign holds what every round shares.
type campaign struct {
	o        options
	t        *tree
	v        *verifier
	cfgFile  string
	stateDir string
	log      *os.File // the current round's log
	agent    *agentRun
}

// agentRun is one agent process.
type agentRun struct {
	cmd   *exec.Cmd
	start time.Time
	done  chan struct{}
	err   error
}

func (r *agentRun) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// start runs the agent with its output in the round's log. It gets a
// process group of its own, so a Ctrl-C reaches only the campaign, which
// then decides what becomes of the agent.
func (c *campaign) start(what string) (*agentRun, error) {
	args := []string{"agent", "--standalone", "--config", c.cfgFile, "--state-dir", c.stateDir,
		"--cgroup-root", c.t.mount, "--metrics-addr", "", "--memory-v1-soft-limit",
		"--config-settle", c.o.settle.String(), "--stop-grace", "2s"}
	if c.o.resync > 0 {
		args = append(args, "--resync", c.o.resync.String())
	}
	fmt.Fprintf(c.log, "--- %s: start agent (%s) at %s\n", time.Now().Format("15:04:05.000"), what, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(c.o.locus, args...)
	cmd.Stdout, cmd.Stderr = c.log, c.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &agentRun{cmd: cmd, done: make(chan struct{})}
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.agent = r
	go func() { r.err = cmd.Wait(); close(r.done) }()
	return r, nil
}

func (c *campaign) kill9(r *agentRun) {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
	fmt.Fprintf(c.log, "--- %s: SIGKILL after %s\n", time.Now().Format("15:04:05.000"), time.Since(r.start).Round(time.Millisecond))
	c.agent = nil
}

// stop sends SIGTERM and returns how the agent exited (nil: status 0).
func (c *campaign) stop(r *agentRun) error {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(c.o.timeout):
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.done
		c.agent = nil
		return fmt.Errorf("still running %s after SIGTERM", c.o.timeout)
	}
	fmt.Fprintf(c.log, "--- %s: stopped with SIGTERM: %v\n", time.Now().Format("15:04:05.000"), r.err)
	c.agent = nil
	return r.err
}

// writeConfig renames a complete file into place, the documented way to
// change the config atomically.
func (c *campaign) writeConfig(cfg config) error {
	tmp := c.cfgFile + ".new"
	if err := os.WriteFile(tmp, []byte(cfg.render(c.t.root)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(c.log, "--- %s: config: %s\n", time.Now().Format("15:04:05.000"), cfg.describe())
	return os.Rename(tmp, c.cfgFile)
}

var errInterrupted = errors.New("interrupted")

// waitFor polls check until it reports nothing, the agent exits, or the
// timeout from `from` passes; it returns how long after `from` the check
// first passed, or the last problems.
func (c *campaign) waitFor(ctx context.Context, r *agentRun, from time.Time, check func() []string) (time.Duration, []string, error) {
	var bad []string
	for {
		bad = check()
		if len(bad) == 0 {
			return time.Since(from), nil, nil
		}
		if r.exited() {
			return 0, append(bad, fmt.Sprintf("the agent exited: %v", r.err)), nil
		}
		if time.Since(from) > c.o.timeout {
			return 0, bad, nil
		}
		select {
		case <-ctx.Done():
			return 0, nil, errInterrupted
		case <-time.After(20 * time.Millisecond):
		}
	}
}

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

type roundResult struct {
	killedEarly, converged, restored bool
	toConverge, toRestore            time.Duration
	problems                         []string
}

// round runs one round (see the package comment) and keeps its evidence
// when it fails.
func (c *campaign) round(ctx context.Context, i int, prev, next config, kill time.Duration) (res roundResult, err error) {
	logName := filepath.Join(c.o.work, "rounds", fmt.Sprintf("round-%03d.log", i))
	if c.log, err = os.Create(logName); err != nil {
		return res, err
	}
	defer c.log.Close()
	roundStart := time.Now()
	fail := func(f string, a ...any) {
		p := fmt.Sprintf(f, a...)
		res.problems = append(res.problems, p)
		fmt.Fprintf(c.log, "--- %s: FAILED %s\n", time.Now().Format("15:04:05.000"), p)
	}

	// 1. The previous round's config, converged and stopped cleanly.
	if err := c.writeConfig(prev); err != nil {
		return res, err
	}
	a, err := c.start("the previous config")
	if err != nil {
		return res, err
	}
	var before observed
	_, bad, err := c.waitFor(ctx, a, a.start, func() []string {
		var b []string
		b, before = c.v.converged(prev, a.start, nil, nil)
		return b
	})
	if err != nil {
		return res, err
	}
	if len(bad) > 0 {
		fail("setup: the previous config did not converge from a clean start: %s", strings.Join(bad, "; "))
	}
	if err := c.stop(a); err != nil {
		fail("setup: agent stopped with %v", err)
	}
	// A clean stop removes the stop-on-agent-exit workload like one taken
	// out of the config: its process and its CPUs are gone.
	for n := range prev {
		if prev[n].StopOnExit {
			delete(before.pid, n)
			delete(before.exclusive, n)
		}
	}

	// 2. The new config, and a kill at a random point of the start.
	if err := c.writeConfig(next); err != nil {
		return res, err
	}
	statusBefore, _ := os.Stat(filepath.Join(c.stateDir, "status.json"))
	a, err = c.start(fmt.Sprintf("to be killed after %s", kill))
	if err != nil {
		return res, err
	}
	select {
	case <-time.After(time.Until(a.start.Add(kill))):
	case <-ctx.Done():
		return res, errInterrupted
	}
	if a.exited() {
		fail("the agent exited by itself before the kill: %v", a.err)
	}
	c.kill9(a)
	statusAfter, _ := os.Stat(filepath.Join(c.stateDir, "status.json"))
	res.killedEarly = statusAfter == nil || (statusBefore != nil && !statusAfter.ModTime().After(statusBefore.ModTime()))

	// 3. Restart at once; time the convergence.
	a, err = c.start("restart after the kill")
	if err != nil {
		return res, err
	}
	took, bad, err := c.waitFor(ctx, a, a.start, func() []string {
		b, _ := c.v.converged(next, a.start, prev, &before)
		return b
	})
	if err != nil {
		return res, err
	}
	if dup := warnings(c.stateDir, roundStart, "DuplicateStopped"); len(dup) > 0 {
		bad = append(bad, dup...)
	}
	if len(bad) == 0 {
		res.converged, res.toConverge = true, took
		fmt.Fprintf(c.log, "--- %s: converged %s after the restart\n", time.Now().Format("15:04:05.000"), took.Round(time.Millisecond))
	} else {
		fail("not converged %s after the restart: %s", c.o.timeout, strings.Join(bad, "; "))
	}

	// 4. No workloads: every original back, before and after a clean stop.
	if err := c.writeConfig(config{}); err != nil {
		return res, err
	}
	res.toRestore, bad, err = c.waitFor(ctx, a, time.Now(), c.v.restored)
	if err != nil {
		return res, err
	}
	if err := c.stop(a); err != nil {
		bad = append(bad, fmt.Sprintf("agent stopped with %v", err))
	}
	if len(bad) == 0 {
		bad = c.v.restored()
	}
	if len(bad) == 0 {
		res.restored = true
	} else {
		fail("originals not restored: %s", strings.Join(bad, "; "))
	}

	if len(res.problems) > 0 {
		if err := c.keepEvidence(i, logName, next); err != nil {
			return res, err
		}
		if err := c.reset(); err != nil {
			return res, fmt.Errorf("round %d: could not reset the sub-tree after the failure: %w", i, err)
		}
	} else if !c.o.keep {
		os.Remove(logName)
	}
	return res, nil
}

// keepEvidence copies the round's log, the state directory and the
// sub-tree's files to WORK/failures/round-N.
func (c *campaign) keepEvidence(i int, logName string, cfg config) error {
	dir := filepath.Join(c.o.work, "failures", fmt.Sprintf("round-%03d", i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", c.stateDir, logName, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "host.yaml"), []byte(cfg.render(c.t.root)), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	now, _ := c.t.snapshot()
	var keys []string
	for d := range now.dirs {
		keys = append(keys, d+"/")
	}
	for f, v := range now.files {
		keys = append(keys, f+" = "+v)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k + "\n")
	}
	b.WriteString("\ndifferences from the originals:\n")
	for _, d := range c.v.base.diff(now) {
		b.WriteString(d + "\n")
	}
	return os.WriteFile(filepath.Join(dir, "cgroups.txt"), []byte(b.String()), 0o644)
}

// reset puts the sub-tree back by hand after a failed round: the agent and
// its processes killed, the cgroups it made removed, the campaign's own
// originals written back, the state directory emptied.
func (c *campaign) reset() error {
	if c.agent != nil {
		c.kill9(c.agent)
	}
	for _, pid := range stateDirProcs(c.stateDir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	sub := &tree{mount: c.t.mount, root: c.t.root + "/locus"}
	if err := sub.remove(""); err != nil {
		return err
	}
	for f, v := range c.v.base.files {
		parts := strings.SplitN(f, "/", 2)
		if cur, err := os.ReadFile(filepath.Join(c.t.mount, f)); err == nil && strings.TrimSpace(string(cur)) != v {
			if err := os.WriteFile(filepath.Join(c.t.mount, f), []byte(v), 0o644); err != nil {
				return fmt.Errorf("%s: %w", parts[0], err)
			}
		}
	}
	if err := os.RemoveAll(c.stateDir); err != nil {
		return err
	}
	if bad := c.v.restored(); len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

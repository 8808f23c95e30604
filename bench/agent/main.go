// Command agent measures the standalone agent on a synthetic host: the
// 192-CPU intel-2s-48c-ht sysfs fixture and a cgroup v2 tree on an ordinary
// directory (-cgroup-in; run.sh picks a tmpfs) with N pre-created workload
// cgroups (half with exclusive CPUs).
//
//  1. reconcile latency: ~30 config changes (memory QoS on/off for every
//     workload, or half the exclusive workloads going 1 <-> 2 CPUs); for each,
//     the time from the config file's replacement until status.json shows the
//     new decision (written after every cgroup file), checked against the
//     files themselves, the agent's own reconcile time from its
//     locus_reconcile_duration_seconds histogram, and the agent's CPU time
//     over the same span (which, unlike wall time, hardly depends on what
//     else the machine runs);
//  2. steady state: the agent's CPU (utime+stime from /proc/PID/stat) and RSS
//     over a quiet period.
//
// run.sh builds locus and runs this; see it for the exact command line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

type options struct {
	locus, work, shape string
	cgroupIn, profile  string
	restProfile        string
	workloads, changes int
	steady, timeout    time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.locus, "locus", "", "the locus binary (required)")
	flag.StringVar(&o.work, "work", "", "work directory (default: a new temporary one, removed at the end)")
	flag.StringVar(&o.shape, "shape", "intel-2s-48c-ht", "sysfs fixture shape")
	flag.StringVar(&o.cgroupIn, "cgroup-in", "", "directory to put the fake cgroup tree in (default: the work directory); "+
		"a tmpfs such as /dev/shm is closer to cgroupfs, which never touches a disk")
	flag.StringVar(&o.restProfile, "rest-profile", "", "run the agent with --profiling and save its CPU profile over the steady-state window to this file "+
		"(the profile's own sampling and transfer then count in the CPU at rest)")
	flag.IntVar(&o.workloads, "workloads", 200, "workload cgroups")
	flag.IntVar(&o.changes, "changes", 30, "config changes to time")
	flag.DurationVar(&o.steady, "steady", 60*time.Second, "steady-state window for CPU and RSS")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Second, "give up on one change after this long")
	flag.StringVar(&o.profile, "profile", "", "run the agent with --profiling and save its CPU profile over the config changes to this file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/agent:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.locus == "" {
		return errors.New("-locus is required")
	}
	if o.workloads < 4 || o.changes < 1 {
		return errors.New("-workloads must be at least 4 and -changes at least 1")
	}
	if o.work == "" {
		dir, err := os.MkdirTemp("", "locus-agent-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.work = dir
	}
	sys, cg, stateDir := filepath.Join(o.work, "sys"), filepath.Join(o.work, "cgroup"), filepath.Join(o.work, "state")
	if o.cgroupIn != "" {
		dir, err := os.MkdirTemp(o.cgroupIn, "locus-agent-bench-cgroup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cg = dir
	}
	fmt.Printf("cgroup tree: %s\n", cg)
	cfgDir := filepath.Join(o.work, "config")
	cfgFile := filepath.Join(cfgDir, "host.yaml")
	if out, err := exec.Command(o.locus, "topology", "fixture", "--shape", o.shape, "--out", sys).CombinedOutput(); err != nil {
		return fmt.Errorf("locus topology fixture: %v: %s", err, out)
	}
	if err := writeCgroupTree(cg, o.workloads); err != nil {
		return err
	}
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return err
	}
	sc := scenario{n: o.workloads}
	if err := writeConfig(cfgFile, sc); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(o.work, "agent.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	args := []string{"agent", "--standalone", "--config", cfgFile, "--state-dir", stateDir,
		"--cgroup-root", cg, "--cgroup-version", "v2", "--sysfs-root", sys, "--metrics-addr", addr}
	if o.profile != "" || o.restProfile != "" {
		args = append(args, "--profiling")
	}
	agent := exec.Command(o.locus, args...)
	agent.Stdout, agent.Stderr = logFile, logFile
	fmt.Printf("agent: %s %v\n", o.locus, args)
	if err := agent.Start(); err != nil {
		return err
	}
	defer func() {
		agent.Process.Signal(syscall.SIGTERM)
		agent.Wait()
	}()

	if _, err := waitFor(stateDir, cg, sc, o.timeout, agent); err != nil {
		return fmt.Errorf("initial reconcile: %w (log: %s)", err, logFile.Name())
	}
	var profiled <-chan error
	if o.profile != "" {
		profiled = startProfile(addr, o.profile, o.changes*3/2+1)
	}
	lat, rec, spent, err := timeChanges(o, addr, cfgFile, stateDir, cg, &sc, agent)
	if err != nil {
		return fmt.Errorf("%w (log: %s)", err, logFile.Name())
	}
	if profiled != nil {
		if err := <-profiled; err != nil {
			return fmt.Errorf("CPU profile: %w", err)
		}
		fmt.Printf("CPU profile over the changes: %s\n", o.profile)
	}
	fmt.Printf("\nreconcile after a config change, %d workloads (%d exclusive), %d changes:\n",
		o.workloads, o.workloads/2, len(lat))
	fmt.Printf("  config written -> status.json shows every file written: p50 %s  p99 %s  max %s\n",
		ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(percentile(lat, 100)))
	fmt.Printf("  the agent's reconcile (locus_reconcile_duration_seconds): p50 %s  p99 %s  max %s\n",
		ms(percentile(rec, 50)), ms(percentile(rec, 99)), ms(percentile(rec, 100)))
	fmt.Printf("  the agent's CPU time from config written to status.json (user+system, 10 ms ticks): mean %s\n",
		ms(mean(spent)))

	var restProfiled <-chan error
	if o.restProfile != "" {
		restProfiled = startProfile(addr, o.restProfile, int(o.steady/time.Second))
	}
	cpu, last, maxRSS, err := steadyState(agent.Process.Pid, o.steady)
	if err != nil {
		return err
	}
	if restProfiled != nil {
		if err := <-restProfiled; err != nil {
			return fmt.Errorf("CPU profile at rest: %w", err)
		}
		fmt.Printf("CPU profile at rest: %s\n", o.restProfile)
	}
	fmt.Printf("\nsteady state over %s with %d workloads: CPU %.3f %% of one core, RSS %.1f MiB (max %.1f MiB): "+
		"anonymous %.1f MiB, file %.1f MiB\n", o.steady, o.workloads, cpu, mib(last.rssKiB), mib(maxRSS),
		mib(last.anonKiB), mib(last.fileKiB))
	return nil
}

// timeChanges applies o.changes config changes, alternating memory QoS
// on/off with half the exclusive workloads changing CPU count, and returns
// each change's end-to-end latency and the agent's reconcile time for it.
func timeChanges(o options, addr, cfgFile, stateDir, cg string, sc *scenario, agent *exec.Cmd) (lat, rec, cpu []time.Duration, err error) {
	for k := 1; k <= o.changes; k++ {
		next := *sc
		kind := "memory QoS " + map[bool]string{true: "off", false: "on"}[sc.memQoS]
		if k%2 == 1 {
			next.memQoS = !next.memQoS
		} else {
			next.wide = !next.wide
			kind = map[bool]string{true: "25% of workloads 2 -> 1 CPUs", false: "25% of workloads 1 -> 2 CPUs"}[sc.wide]
		}
		before, err := scrapeHistogram(addr, "locus_reconcile_duration_seconds")
		if err != nil {
			return nil, nil, nil, err
		}
		cpu0, err := sampleProc(agent.Process.Pid)
		if err != nil {
			return nil, nil, nil, err
		}
		start := time.Now()
		if err := writeConfig(cfgFile, next); err != nil {
			return nil, nil, nil, err
		}
		st, err := waitFor(stateDir, cg, next, o.timeout, agent)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("change %d (%s): %w", k, kind, err)
		}
		took := time.Since(start)
		cpu1, err := sampleProc(agent.Process.Pid)
		if err != nil {
			return nil, nil, nil, err
		}
		cpu = append(cpu, time.Duration(cpu1.cpuTicks-cpu0.cpuTicks)*time.Second/clockTicks)
		if err := checkFiles(cg, st, next); err != nil {
			return nil, nil, nil, fmt.Errorf("change %d (%s): %w", k, kind, err)
		}
		after, err := scrapeAfter(addr, before, 5*time.Second)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("change %d: %w", k, err)
		}
		n := after.count - before.count
		// Several reconciles may have run (a resync, a second file event);
		// the mean is each one's share.
		per := time.Duration((after.sum - before.sum) / n * float64(time.Second))
		lat, rec = append(lat, took), append(rec, per)
		fmt.Printf("change %2d  %-30s  %8s end to end, %8s reconcile (%g reconcile(s))\n", k, kind, ms(took), ms(per), n)
		*sc = next
		time.Sleep(300 * time.Millisecond) // let the config watcher's late events settle
	}
	return lat, rec, cpu, nil
}

// scrapeAfter reads the reconcile histogram until it counts a reconcile
// more than before: the agent writes status.json at the end of a reconcile
// and observes its duration a moment later, so the first scrape may be early.
func scrapeAfter(addr string, before histogram, limit time.Duration) (histogram, error) {
	deadline := time.Now().Add(limit)
	for {
		h, err := scrapeHistogram(addr, "locus_reconcile_duration_seconds")
		if err != nil || h.count > before.count {
			return h, err
		}
		if time.Now().After(deadline) {
			return h, fmt.Errorf("status changed but no reconcile was counted within %s", limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitFor polls status.json (cheaply: a stat per millisecond, a parse only
// when the file was replaced) until it shows scenario s.
func waitFor(stateDir, cg string, s scenario, timeout time.Duration, agent *exec.Cmd) (status, error) {
	path := filepath.Join(stateDir, "status.json")
	var last os.FileInfo
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && (last == nil || !os.SameFile(fi, last) || fi.ModTime() != last.ModTime()) {
			last = fi
			if st, err := readStatus(stateDir); err == nil && reached(st, s) {
				return st, nil
			}
		}
		if agent.ProcessState != nil || syscall.Kill(agent.Process.Pid, 0) != nil {
			return status{}, errors.New("the agent exited")
		}
		time.Sleep(time.Millisecond)
	}
	return status{}, fmt.Errorf("status.json did not show the new config within %s", timeout)
}

// steadyState samples the agent once a second for d and returns its CPU use
// in percent of one core, its last sample and its largest RSS (KiB).
func steadyState(pid int, d time.Duration) (cpuPercent float64, last procSample, maxRSS uint64, err error) {
	first, err := sampleProc(pid)
	if err != nil {
		return 0, last, 0, err
	}
	start := time.Now()
	last = first
	maxRSS = first.rssKiB
	for time.Since(start) < d {
		time.Sleep(min(time.Second, d-time.Since(start)))
		if last, err = sampleProc(pid); err != nil {
			return 0, last, 0, err
		}
		maxRSS = max(maxRSS, last.rssKiB)
	}
	secs := float64(last.cpuTicks-first.cpuTicks) / clockTicks
	return 100 * secs / time.Since(start).Seconds(), last, maxRSS, nil
}

func mib(kib uint64) float64 { return float64(kib) / 1024 }

func mean(xs []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range xs {
		sum += x
	}
	return sum / time.Duration(max(len(xs), 1))
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

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

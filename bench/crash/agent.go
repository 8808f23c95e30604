package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

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

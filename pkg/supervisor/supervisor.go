// Package supervisor starts, finds, restarts and stops the processes of the
// standalone agent's command workloads, each through a shim that joins the
// workload's cgroup before it execs the command.
package supervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
)

// Environment variables the agent gives the processes it starts. They let a
// restarted agent find its processes even when it was killed between
// starting one and recording it, so it never starts a duplicate.
const (
	envWorkload = "LOCUS_WORKLOAD"
	envStateDir = "LOCUS_STATE_DIR"
	envSpec     = "LOCUS_SPEC" // hash of cgroup and command: a changed command restarts
)

const (
	BackoffMin   = time.Second
	backoffMax   = time.Minute
	backoffReset = time.Minute // a process that ran this long starts a fresh backoff
)

// runState is what the agent remembers of a command workload in this life.
type runState struct {
	failures  int
	notBefore time.Time
	startedAt time.Time
	lastExit  string // from Wait, for processes this agent started
	restarts  int
}

// supervisor starts, finds and stops the processes of command workloads.
type Supervisor struct {
	procs    procfs.FS
	h        *cgroup.Hierarchy
	exe      string // the binary that has the shim (normally locus itself)
	stateDir string // absolute
	grace    time.Duration
	wake     func(after time.Duration)

	mu   sync.Mutex
	runs map[string]*runState
}

// New returns a supervisor for the command workloads of the agent whose
// state directory (absolute) is stateDir. exe is the binary that has the
// shim (normally locus itself); wake asks the agent for a reconcile.
func New(procs procfs.FS, h *cgroup.Hierarchy, exe, stateDir string, grace time.Duration, wake func(after time.Duration)) *Supervisor {
	return &Supervisor{procs: procs, h: h, exe: exe, stateDir: stateDir, grace: grace, wake: wake, runs: map[string]*runState{}}
}

// Supervised counts the workloads this supervisor keeps a record of.
func (s *Supervisor) Supervised() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

func (s *Supervisor) run(name string) *runState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[name] == nil {
		s.runs[name] = &runState{}
	}
	return s.runs[name]
}

// SpecHash identifies what a process was started to run.
func SpecHash(cgroupPath string, argv []string) string {
	sum := sha256.Sum256([]byte(cgroupPath + "\x00" + strings.Join(argv, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// Owned is one live process this agent (in any life) started for a workload.
type Owned struct {
	state.Process
	Spec string // SpecHash of what it was started to run
}

// Find scans the proc root for live processes started for workload name by
// an agent with this state directory, oldest first. A process caught in
// execve shows an empty environment for a moment, so processes whose
// environment reads empty are read again after growing pauses: missing one
// would start a duplicate.
func (s *Supervisor) Find(name string) []Owned {
	pids, err := s.procs.PIDs()
	if err != nil {
		return nil
	}
	var out []Owned
	var unclear []int
	// retry says whether an unreadable environment is looked at again,
	// from the process's state as just read.
	check := func(pid int, retry func(procfs.Stat) bool) {
		st, err := s.procs.Stat(pid)
		if err != nil || !st.Running() || st.PPID == 2 || pid == 2 { // gone, exited, kernel thread
			return
		}
		env, err := s.procs.Environ(pid)
		if (err != nil || len(env) == 0) && retry(st) {
			unclear = append(unclear, pid)
			return
		}
		if envValue(env, envWorkload) == name && envValue(env, envStateDir) == s.stateDir {
			out = append(out, Owned{Process: state.Process{PID: pid, StartTime: st.StartTime}, Spec: envValue(env, envSpec)})
		}
	}
	for _, pid := range pids {
		check(pid, func(procfs.Stat) bool { return true })
	}
	// A second look after 5 ms settles most. A process still unreadable and
	// running or in uninterruptible sleep may be inside an exec, which on a
	// loaded machine takes tens of milliseconds: it is read again after
	// growing pauses, up to 155 ms in all. One that sleeps (pid 1 of a
	// container, started with no environment) has none, and costs no more.
	// Find runs only when a recorded process is not alive.
	for pause := 5 * time.Millisecond; len(unclear) > 0; pause *= 2 {
		time.Sleep(pause)
		again := unclear
		unclear = nil
		inExec := func(st procfs.Stat) bool {
			return pause < 80*time.Millisecond && (st.State == 'R' || st.State == 'D')
		}
		for _, pid := range again {
			check(pid, inExec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartTime < out[j].StartTime })
	return out
}

// Ours reports whether pid was started by this agent's state directory.
func (s *Supervisor) Ours(pid int) bool {
	env, err := s.procs.Environ(pid)
	return err == nil && envValue(env, envStateDir) == s.stateDir && envValue(env, envWorkload) != ""
}

// SpecOf returns the spec hash a process was started with (SpecHash), from
// its environment. known is false when the environment cannot be read or reads empty, as it
// does for a moment while the shim execs the command (the kernel swaps the
// process's memory): that says nothing about the spec, and taking it for a
// change restarted a workload just started, on a slow (emulated) CPU.
func (s *Supervisor) SpecOf(pid int) (spec string, known bool) {
	env, err := s.procs.Environ(pid)
	if err != nil || len(env) == 0 {
		return "", false
	}
	return envValue(env, envSpec), true
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// Start launches the workload's command through the shim in a session of
// its own (so a terminal's Ctrl-C reaches the agent only), with output
// appended to <state-dir>/logs/<name>.log.
// joinSettle is how long after a start the agent looks again: enough for the
// shim (a Go binary) to start and write itself into cgroup.procs.
const joinSettle = 300 * time.Millisecond

func (s *Supervisor) Start(name, rel string, argv []string) (state.Process, error) {
	logDir := filepath.Join(s.stateDir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return state.Process{}, err
	}
	out, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return state.Process{}, err
	}
	defer out.Close()
	cmd := exec.Command(s.exe, shimArgs(s.h, rel, argv)...)
	cmd.Env = append(os.Environ(), envWorkload+"="+name, envStateDir+"="+s.stateDir,
		envSpec+"="+SpecHash(rel, argv))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return state.Process{}, fmt.Errorf("start %s: %w", name, err)
	}
	p := state.Process{PID: cmd.Process.Pid}
	if st, err := s.procs.Stat(p.PID); err == nil {
		p.StartTime = st.StartTime
	}
	rs := s.run(name)
	s.mu.Lock()
	rs.startedAt, rs.lastExit = time.Now(), ""
	s.mu.Unlock()
	// The shim joins the cgroup a moment after Start returns; a follow-up
	// reconcile then shows its pid in the status instead of at the next resync.
	s.wake(joinSettle)
	go func() {
		// Reap it and wake the agent so it restarts the workload.
		err := cmd.Wait()
		s.mu.Lock()
		rs.lastExit = "exit status 0"
		if err != nil {
			rs.lastExit = err.Error()
		}
		s.mu.Unlock()
		s.wake(0)
	}()
	return p, nil
}

// Exited records that a workload's process was found dead and returns how
// long to wait before starting it again and what is known of the exit.
func (s *Supervisor) Exited(name string, now time.Time) (time.Duration, string) {
	rs := s.run(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !rs.startedAt.IsZero() && now.Sub(rs.startedAt) >= backoffReset {
		rs.failures = 0
	}
	rs.failures++
	delay := BackoffMin << min(rs.failures-1, 6)
	delay = min(delay, backoffMax)
	rs.notBefore = now.Add(delay)
	rs.restarts++
	why := rs.lastExit
	if why == "" {
		why = "exit status unknown: not started by this agent process"
	}
	return delay, why
}

// Adopted notes a process found running (recorded or by its environment).
func (s *Supervisor) Adopted(name string, now time.Time) {
	rs := s.run(name)
	s.mu.Lock()
	if rs.startedAt.IsZero() {
		rs.startedAt = now
	}
	s.mu.Unlock()
}

// WaitFor returns how long until the workload may be started again.
func (s *Supervisor) WaitFor(name string, now time.Time) time.Duration {
	rs := s.run(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(0, rs.notBefore.Sub(now))
}

func (s *Supervisor) Restarts(name string) int {
	rs := s.run(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	return rs.restarts
}

// Stop ends a process the agent started, and its process group: SIGTERM,
// then SIGKILL after the grace period. A process that is already gone, or
// whose pid now names another process, is left alone.
func (s *Supervisor) Stop(p state.Process) error {
	if !s.procs.Alive(p.PID, p.StartTime) {
		return nil
	}
	target := p.PID
	if st, err := s.procs.Stat(p.PID); err == nil && st.PGRP == p.PID {
		target = -p.PID // the whole session it leads
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := syscall.Kill(target, sig); err != nil && err != syscall.ESRCH {
			return fmt.Errorf("signal process %d: %w", p.PID, err)
		}
		deadline := time.Now().Add(s.grace)
		if sig == syscall.SIGKILL {
			deadline = time.Now().Add(5 * time.Second)
		}
		for time.Now().Before(deadline) {
			if !s.procs.Alive(p.PID, p.StartTime) {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return fmt.Errorf("process %d did not exit after SIGKILL", p.PID)
}

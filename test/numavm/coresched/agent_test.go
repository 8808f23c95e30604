package coresched

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/status"
)

// settle is how long the tests wait for the agent to act: TCG is slow and
// the host may be loaded, so it is wide.
const settle = 60 * time.Second

// hostConfig is the agent's config: ls owns one whole core (CPU 0 is
// reserved, so the full-pcpus allocator takes the core 2-3) and asks for
// core isolation as isolate says; be runs in the BE pool (CPU 1).
func hostConfig(isolate bool) string {
	return fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: "0"
workloads:
- name: ls
  cgroup: cs-ls
  qosClass: LS
  resources:
    requests: {cpu: "2"}
    limits: {cpu: "2"}
  annotations:
    cpuset-scheduler: "true"
    cpu-policy: full-pcpus
    locus.io/core-isolation: "%t"
- name: be
  cgroup: cs-be
  qosClass: BE
`, isolate)
}

// agent is the standalone agent, run from the locus binary in the guest.
type agent struct {
	dir  string // config directory, state directory and log under it
	cmd  *exec.Cmd
	log  *os.File
	from time.Time // when it was last started
}

func newAgent(t *testing.T, isolate bool) *agent {
	t.Helper()
	a := &agent{dir: t.TempDir()}
	if err := os.Mkdir(filepath.Join(a.dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	a.configure(t, isolate)
	t.Cleanup(func() {
		a.stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(a.dir, "agent.log"))
			t.Logf("agent log:\n%s", b)
		}
	})
	return a
}

// configure writes the config next to the old one and renames it into place,
// as the agent wants a change made.
func (a *agent) configure(t *testing.T, isolate bool) {
	t.Helper()
	tmp := filepath.Join(a.dir, "conf", ".host.yaml")
	if err := os.WriteFile(tmp, []byte(hostConfig(isolate)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(a.dir, "conf", "host.yaml")); err != nil {
		t.Fatal(err)
	}
}

func (a *agent) state() string { return filepath.Join(a.dir, "state") }

// start runs the agent. It reconciles at start and on config changes only
// (resync 1h), so a cookie seen between those was not set by the agent.
func (a *agent) start(t *testing.T) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(a.dir, "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command("locus", "agent", "--standalone", "--config", filepath.Join(a.dir, "conf", "host.yaml"),
		"--state-dir", a.state(), "--metrics-addr", "", "--resync", "1h", "--config-settle", "200ms")
	a.cmd.Stdout, a.cmd.Stderr, a.log = log, log, log
	a.from = time.Now()
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

// stop ends the agent with SIGTERM, as a service manager does.
func (a *agent) stop(t *testing.T) {
	t.Helper()
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("agent exited: %v", err)
		}
	case <-time.After(settle):
		_ = a.cmd.Process.Kill()
		<-done
		t.Errorf("agent did not stop within %s of SIGTERM", settle)
	}
	_ = a.log.Close()
	a.cmd = nil
}

// reconciled waits for a status written after the agent's (re)start.
func (a *agent) reconciled(t *testing.T) status.Status {
	t.Helper()
	var st status.Status
	waitFor(t, "reconciled since the agent started", settle, func() (bool, string) {
		var err error
		st, err = status.Read(a.state())
		if err != nil {
			return false, err.Error()
		}
		return st.Time.After(a.from), "status of " + st.Time.String()
	})
	return st
}

// checkpointed is the checkpoint's list of isolated workloads.
func (a *agent) checkpointed(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(a.state(), "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ck struct {
		CoreIsolated []string `json:"coreIsolated"`
	}
	if err := json.Unmarshal(b, &ck); err != nil {
		t.Fatalf("checkpoint.json: %v", err)
	}
	return ck.CoreIsolated
}

// workloads are the processes of the test's two workloads: ls is a Go
// worker (several threads) that forks on request, and a spinner, stopped
// until a test needs it; be is a sleep.
type workloads struct {
	ls       *worker
	lsPIDs   []int
	spinner  int // in ls
	bePIDs   []int
	stranger int // in no workload, stopped until a test needs it
}

func startWorkloads(t *testing.T) *workloads {
	t.Helper()
	w := &workloads{ls: startWorker(t)}
	w.spinner = start(t, "sh", "-c", "while :; do :; done")
	w.stranger = start(t, "sh", "-c", "while :; do :; done")
	for _, p := range []int{w.spinner, w.stranger} {
		if err := unix.Kill(p, unix.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	w.lsPIDs = []int{w.ls.cmd.Process.Pid, w.spinner}
	w.bePIDs = []int{start(t, "sleep", "3600")}
	makeCgroup(t, "cs-ls", w.lsPIDs...)
	makeCgroup(t, "cs-be", w.bePIDs...)
	return w
}

// lsCookie waits until every thread of ls's processes (and of more) shares
// one nonzero cookie, and returns it.
func (w *workloads) lsCookie(t *testing.T, more ...int) uint64 {
	t.Helper()
	var c uint64
	waitFor(t, "one cookie on every thread of ls", settle, func() (bool, string) {
		cs, err := threadCookies(append(slices.Clone(w.lsPIDs), more...))
		if err != nil {
			return false, err.Error()
		}
		var ok bool
		c, ok = shared(cs)
		return ok, fmt.Sprint(cs)
	})
	return c
}

// noCookie waits until no thread of the processes has a cookie.
func noCookie(t *testing.T, what string, pids []int) {
	t.Helper()
	waitFor(t, "no cookie on any thread of "+what, settle, func() (bool, string) {
		cs, err := threadCookies(pids)
		if err != nil {
			return false, err.Error()
		}
		return none(cs), fmt.Sprint(cs)
	})
}

// TestAgentCoreIsolation drives the standalone agent through the life of
// an isolated workload: the cookie given, inherited, taken away when the
// workload stops asking, given again, and kept across a restart; be never
// has one.
func TestAgentCoreIsolation(t *testing.T) {
	guest(t)
	w := startWorkloads(t)
	a := newAgent(t, true)
	a.start(t)
	st := a.reconciled(t)
	if !slices.Contains(st.Node.CPUQoS, "core scheduling: available (prctl PR_SCHED_CORE)") {
		t.Errorf("status's CPU QoS lines %q lack core scheduling: available", st.Node.CPUQoS)
	}
	out, err := exec.Command("locus", "status", "--state-dir", a.state()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "core scheduling: available (prctl PR_SCHED_CORE)") {
		t.Errorf("locus status: %v\n%s", err, out)
	}
	if ws := workloadStatus(t, st, "ls"); ws.CPUs != "2-3" || !strings.Contains(ws.CPUQOS.CoreIsolation, "share a core scheduling cookie") {
		t.Errorf("ls: cpus %q, core isolation %q; want 2-3 and a shared cookie", ws.CPUs, ws.CPUQOS.CoreIsolation)
	}

	first := w.lsCookie(t)
	t.Logf("ls's threads share cookie %#x", first)
	noCookie(t, "be", w.bePIDs)

	// The kernel's effect, with a wide margin: while ls is isolated, a
	// task without its cookie on the sibling of ls's spinner is kept apart
	// from it, so one of the two runs with the other's CPU forced idle.
	stranger, ls := w.forcedIdle(t, 2, 3)
	t.Logf("isolated: forced idle accrued by the stranger %.1f ms, by ls's spinner %.1f ms in 3 s", stranger, ls)
	if stranger < 100 {
		t.Errorf("isolated: the stranger on ls's sibling accrued %.1f ms core_forceidle_sum in 3 s, want at least 100", stranger)
	}
	if own, err := cookie(0); err != nil || own != 0 {
		t.Errorf("the test's own thread has cookie %#x (%v)", own, err)
	}

	// A child forked now inherits the cookie from the kernel: the agent
	// does not reconcile before the next config change.
	child := w.ls.fork(t)
	if c := w.lsCookie(t, child); c != first {
		t.Errorf("ls's cookie changed from %#x to %#x with a child", first, c)
	}
	w.lsPIDs = append(w.lsPIDs, child)

	// Stops asking: every thread loses the cookie, the child's too.
	a.configure(t, false)
	noCookie(t, "ls after it stopped asking", w.lsPIDs)
	stranger, ls = w.forcedIdle(t, 2, 3)
	t.Logf("not isolated: forced idle accrued by the stranger %.1f ms, by ls's spinner %.1f ms in 3 s", stranger, ls)
	if stranger > 1 || ls > 1 {
		t.Errorf("not isolated: forced idle %.1f ms (stranger), %.1f ms (ls) in 3 s, want none", stranger, ls)
	}
	waitFor(t, "dropped from the checkpoint", settle, func() (bool, string) {
		ck := a.checkpointed(t)
		return len(ck) == 0, fmt.Sprint(ck)
	})

	// Asks again: a cookie again.
	a.configure(t, true)
	again := w.lsCookie(t)
	// The checkpoint is saved after the cookies are given.
	waitFor(t, "ls recorded as isolated in the checkpoint", settle, func() (bool, string) {
		ck := a.checkpointed(t)
		return slices.Equal(ck, []string{"ls"}), fmt.Sprint(ck)
	})

	// Restarted while still asking: the cookie stays as it was.
	a.stop(t)
	if c := w.lsCookie(t); c != again {
		t.Errorf("the agent's stop changed ls's cookie from %#x to %#x", again, c)
	}
	a.start(t)
	a.reconciled(t)
	if c := w.lsCookie(t); c != again {
		t.Errorf("after a restart ls's cookie is %#x, was %#x", c, again)
	}

	// Stops asking while the agent is down: the restarted agent, told by
	// its checkpoint, takes the cookie back.
	a.stop(t)
	a.configure(t, false)
	if c := w.lsCookie(t); c != again {
		t.Errorf("with no agent running, ls's cookie changed from %#x to %#x", again, c)
	}
	a.start(t)
	a.reconciled(t)
	noCookie(t, "ls after a restart with it no longer asking", w.lsPIDs)
	waitFor(t, "dropped from the checkpoint after the restart", settle, func() (bool, string) {
		ck := a.checkpointed(t)
		return len(ck) == 0, fmt.Sprint(ck)
	})
	noCookie(t, "be", w.bePIDs)
}

func workloadStatus(t *testing.T, st status.Status, name string) status.WorkloadStatus {
	t.Helper()
	for _, w := range st.Workloads {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("status has no workload %s", name)
	return status.WorkloadStatus{}
}

// TestDoctorCoreScheduling: locus doctor's core-scheduling check passes.
func TestDoctorCoreScheduling(t *testing.T) {
	guest(t)
	out, _ := exec.Command("locus", "doctor", "-o", "json").Output() // other checks may warn
	var checks []struct{ Check, Status, Found string }
	if err := json.Unmarshal(out, &checks); err != nil {
		t.Fatalf("locus doctor -o json: %v\n%s", err, out)
	}
	for _, c := range checks {
		if c.Check == "core-scheduling" {
			if c.Status != "ok" || !strings.Contains(c.Found, "available (prctl PR_SCHED_CORE)") {
				t.Errorf("core-scheduling: %s: %s", c.Status, c.Found)
			}
			return
		}
	}
	t.Fatalf("locus doctor has no core-scheduling check:\n%s", out)
}

// forcedIdle runs ls's spinner on one CPU of its core and the stranger
// (no cookie) on the sibling for a few seconds, and returns how much
// core_forceidle_sum each accrued meanwhile, in milliseconds.
func (w *workloads) forcedIdle(t *testing.T, lsCPU, siblingCPU int) (stranger, ls float64) {
	t.Helper()
	schedstats(t)
	for _, pc := range [][2]int{{w.spinner, lsCPU}, {w.stranger, siblingCPU}} {
		var set unix.CPUSet
		set.Set(pc[1])
		if err := unix.SchedSetaffinity(pc[0], &set); err != nil {
			t.Fatalf("pin pid %d to cpu %d: %v", pc[0], pc[1], err)
		}
	}
	s0, l0 := forceIdleSum(t, w.stranger), forceIdleSum(t, w.spinner)
	for _, p := range []int{w.spinner, w.stranger} {
		if err := unix.Kill(p, unix.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * time.Second)
	for _, p := range []int{w.spinner, w.stranger} {
		if err := unix.Kill(p, unix.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	return forceIdleSum(t, w.stranger) - s0, forceIdleSum(t, w.spinner) - l0
}

// schedstats turns kernel.sched_schedstats on, once per test, and back to
// what it was when the test ends: without it the kernel counts no forced
// idle time.
func schedstats(t *testing.T) {
	t.Helper()
	const knob = "/proc/sys/kernel/sched_schedstats"
	old, err := os.ReadFile(knob)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(old)) == "1" {
		return
	}
	if err := os.WriteFile(knob, []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(knob, old, 0o644); err != nil {
			t.Errorf("restoring %s: %v", knob, err)
		}
	})
}

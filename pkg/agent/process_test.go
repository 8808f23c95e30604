package agent

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/supervisor"
)

// killOwned ends every process an agent with this state dir started.
func killOwned(stateDir string) {
	procs := procfs.New("")
	s := supervisor.New(procs, nil, "", stateDir, 0, nil)
	pids, _ := procs.PIDs()
	for _, pid := range pids {
		if s.Ours(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// owned lists live processes of a workload started from stateDir.
func ownedProcs(stateDir, name string) []supervisor.Owned {
	return supervisor.New(procfs.New(""), nil, "", stateDir, 0, nil).Find(name)
}

const commandConfig = head + `workloads:
- name: cmd
  command: [sleep, "600"]
  qosClass: BE
`

func TestCommandStartsOnceAndIsReadopted(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	// Fixture trees cannot create cgroups the way the kernel does (files
	// appear with the directory), so the cgroup exists beforehand.
	tree.mkcg("locus.slice/cmd")
	h := newHarness(t, tree, commandConfig, nil)
	t.Cleanup(func() { killOwned(h.opts.StateDir) })
	h.reconcile()
	started := h.checkpoint().Workloads["cmd"].Started
	if started == nil {
		t.Fatal("no process recorded")
	}
	// The shim joined the cgroup before exec: its pid is in cgroup.procs.
	waitFor(t, func() bool { return tree.get("cpuset", "locus.slice/cmd", "cgroup.procs") == strconv.Itoa(started.PID) })
	waitFor(t, func() bool { c, _ := procfs.New("").Comm(started.PID); return c == "sleep" })
	h.reconcile()
	if got := ownedProcs(h.opts.StateDir, "cmd"); len(got) != 1 || got[0].PID != started.PID {
		t.Fatalf("after a second reconcile: processes %v, want only %d", got, started.PID)
	}

	// A new agent whose checkpoint lost the start (killed before saving it)
	// finds the process by its environment instead of starting another.
	h.a.Close()
	if err := (&state.Store{Dir: h.opts.StateDir}).Update(func(c *state.Checkpoint) error {
		w := c.Workloads["cmd"]
		w.Started = nil
		c.Workloads["cmd"] = w
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	a2, err := New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	h.a = a2
	h.reconcile()
	if got := ownedProcs(h.opts.StateDir, "cmd"); len(got) != 1 || got[0].PID != started.PID {
		t.Fatalf("after a restart: processes %v, want only %d", got, started.PID)
	}
	if p := h.checkpoint().Workloads["cmd"].Started; p == nil || *p != *started {
		t.Fatalf("re-adopted %v, want %v", p, started)
	}

	// An exit is restarted after the backoff.
	if err := syscall.Kill(started.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !procfs.New("").Alive(started.PID, started.StartTime) })
	h.reconcile()
	if got := ownedProcs(h.opts.StateDir, "cmd"); len(got) != 0 {
		t.Fatalf("restarted at once, without backoff: %v", got)
	}
	time.Sleep(supervisor.BackoffMin)
	h.reconcile()
	got := ownedProcs(h.opts.StateDir, "cmd")
	if len(got) != 1 || got[0].PID == started.PID {
		t.Fatalf("after the backoff: processes %v, want one new", got)
	}
	reasons := ""
	for _, e := range h.events() {
		reasons += e.Reason + " "
	}
	for _, want := range []string{"WorkloadStarted", "WorkloadAdopted", "WorkloadExited"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("no %s event in %s", want, reasons)
		}
	}

	// Removing the workload stops its process.
	h.writeConfig(head + "workloads: []\n")
	h.reconcile()
	if got := ownedProcs(h.opts.StateDir, "cmd"); len(got) != 0 {
		t.Fatalf("removed workload still runs: %v", got)
	}
}

func TestOnceDoesNotStartCommands(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("locus.slice/cmd")
	h := newHarness(t, tree, commandConfig, func(o *Options) { o.Once = true })
	t.Cleanup(func() { killOwned(h.opts.StateDir) })
	res := h.reconcile()
	if len(ownedProcs(h.opts.StateDir, "cmd")) != 0 {
		t.Fatal("--once started a command")
	}
	if len(res.Problems) != 1 || res.Problems[0].Message != "not started under --once" {
		t.Errorf("problems = %v", res.Problems)
	}
}

func TestMatchMovesOnlyMatchingProcesses(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("locus.slice/m")
	yes := exec.Command("sleep", "601.25")
	no := exec.Command("sleep", "601.5")
	for _, c := range []*exec.Cmd{yes, no} {
		if err := c.Start(); err != nil {
			t.Skip("no sleep:", err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	h := newHarness(t, tree, head+"workloads:\n- {name: m, match: {comm: \"sle*\", cmdline: \"601.25\", uid: 0}}\n", nil)
	h.reconcile()
	if got := tree.get("", "locus.slice/m", "cgroup.procs"); got != strconv.Itoa(yes.Process.Pid) {
		t.Fatalf("cgroup.procs = %q, want only the matching pid %d (not %d)", got, yes.Process.Pid, no.Process.Pid)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}

func TestRunStopsOnlyStopOnExitWorkloads(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("locus.slice/demo", "locus.slice/keep")
	cfg := head + `workloads:
- {name: demo, command: [sleep, "600"], annotations: {locus.io/stop-on-agent-exit: "true"}}
- {name: keep, command: [sleep, "600"]}
`
	h := newHarness(t, tree, cfg, func(o *Options) { o.Resync = 20 * time.Millisecond })
	t.Cleanup(func() { killOwned(h.opts.StateDir) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.a.Run(ctx) }()
	waitFor(t, func() bool {
		return len(ownedProcs(h.opts.StateDir, "demo")) == 1 && len(ownedProcs(h.opts.StateDir, "keep")) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := ownedProcs(h.opts.StateDir, "demo"); len(got) != 0 {
		t.Errorf("stop-on-exit workload still runs: %v", got)
	}
	if got := ownedProcs(h.opts.StateDir, "keep"); len(got) != 1 {
		t.Errorf("ordinary workload stopped with the agent: %v", got)
	}
	c := h.checkpoint()
	if _, ok := c.Workloads["demo"]; ok {
		t.Error("stopped workload still in the checkpoint")
	}
	if _, ok := c.Workloads["keep"]; !ok {
		t.Error("running workload dropped from the checkpoint")
	}
	if st, _ := status.Read(h.opts.StateDir); len(st.Workloads) != 1 || st.Workloads[0].Name != "keep" {
		t.Errorf("status after exit lists %+v", st.Workloads)
	}
}

func TestRunReloadsTheConfigOnChange(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, func(o *Options) { o.Resync = time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, func() bool { return tree.file("pods/batch", "cpuset.cpus") != "0-3" })
	// Only the file watch can apply this within the test: resync is an hour.
	h.writeConfig(strings.Replace(redisAndBatch, `reservedCPUs: "0"`, `reservedCPUs: "0-1"`, 1))
	waitFor(t, func() bool {
		st, err := status.Read(h.opts.StateDir)
		return err == nil && st.Node.Reserved == "0-1"
	})
}

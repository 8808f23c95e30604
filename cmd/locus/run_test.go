package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/runner"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// Tests that need the real binary (a command re-executes itself, or must be
// signalled from outside) share one build, made on first use and removed by
// TestMain.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestRunExclusiveCPUAndStatus(t *testing.T) {
	bin, sd, parent := kernelRun(t)
	script := `grep Cpus_allowed_list /proc/self/status; grep -E ':(cpuset|memory):' /proc/self/cgroup;
cat /sys/fs/cgroup/memory$(grep ':memory:' /proc/self/cgroup | cut -d: -f3)/memory.limit_in_bytes; exit 3`
	out, errOut, code := execLocus(t, bin, runArgs(sd, parent, "--cpus", "1", "--memory-limit", "64Mi", "--", "sh", "-c", script)...)
	if code != 3 {
		t.Fatalf("exit %d, want the command's 3; stderr: %s", code, errOut)
	}
	if cpus := allowedCPUs(out); cpus != "0" && cpus != "1" {
		t.Errorf("command ran on CPUs %q, want one CPU\n%s", cpus, out)
	}
	for _, ctrl := range []string{"cpuset", "memory"} {
		if !strings.Contains(out, ":"+ctrl+":/"+parent+"/run-") {
			t.Errorf("command's first instruction ran outside its %s cgroup:\n%s", ctrl, out)
		}
	}
	if !strings.Contains(out, "\n67108864\n") {
		t.Errorf("memory.limit_in_bytes is not 64Mi:\n%s", out)
	}
	assertNothingLeft(t, sd, parent)
}

// startHolder starts a run that prints its CPUs and waits until stop exists.
func startHolder(t *testing.T, bin string, args []string, stop string) (*exec.Cmd, string) {
	t.Helper()
	script := fmt.Sprintf(`grep Cpus_allowed_list /proc/self/status; while [ ! -e %s ]; do sleep 0.02; done`, stop)
	cmd := exec.Command(bin, append(args, "--", "sh", "-c", script)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("holder printed nothing: %v", err)
	}
	go io.Copy(io.Discard, stdout)
	return cmd, allowedCPUs(line)
}

func TestRunConcurrentRunsGetDistinctCPUs(t *testing.T) {
	bin, sd, parent := kernelRun(t)
	stop := filepath.Join(t.TempDir(), "stop")
	holder, first := startHolder(t, bin, runArgs(sd, parent, "--cpus", "1"), stop)
	if first != "0" && first != "1" {
		t.Fatalf("first run got %q, want one CPU", first)
	}
	held := leases(t, sd)
	if len(held) != 1 {
		t.Fatalf("leases while the first run holds its CPU: %+v, want one", held)
	}
	for _, l := range held {
		if l.Assignment.CPUs.String() != first || l.Owner.PID != holder.Process.Pid {
			t.Errorf("lease %+v: want cpus %s owned by pid %d", l, first, holder.Process.Pid)
		}
	}
	other := map[string]string{"0": "1", "1": "0"}[first]
	for _, args := range [][]string{{"--cpus", "1"}, {}} { // exclusive, then the shared pool
		out, errOut, code := execLocus(t, bin, runArgs(sd, parent, append(args, "--", "grep", "Cpus_allowed_list", "/proc/self/status")...)...)
		if code != 0 || allowedCPUs(out) != other {
			t.Errorf("run %v beside the holder: exit %d, CPUs %q, want %s; stderr %s", args, code, allowedCPUs(out), other, errOut)
		}
	}
	if _, errOut, code := execLocus(t, bin, runArgs(sd, parent, "--cpus", "2", "--", "true")...); code != 2 ||
		!strings.Contains(errOut, "not enough free CPUs") {
		t.Errorf("--cpus 2 beside the holder: exit %d, stderr %q; want 2 and not enough free CPUs", code, errOut)
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	assertNothingLeft(t, sd, parent)
}

func TestRunRefusesBadInputAndChangesNothing(t *testing.T) {
	bin, sd, parent := kernelRun(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--cpus", "3", "--", "true"}, "not enough free CPUs"},
		{[]string{"--cpus", "1", "--policy", "pack", "--", "true"}, "unknown policy"},
		{[]string{"--memory-qos", "maybe", "--", "true"}, "--memory-qos"},
		{[]string{"--cpu-qos", "maybe", "--", "true"}, "--cpu-qos"},
		{[]string{"--memory-limit", "lots", "--", "true"}, "--memory-limit"},
		{[]string{"--memory-request", "2Gi", "--memory-limit", "1Gi", "--", "true"}, "exceeds the memory limit"},
		{[]string{"--qos", "GOLD", "--", "true"}, "GOLD"},
		{[]string{"--cpus", "1", "--hugepages-2Mi", "3Mi", "--", "true"}, "not a whole number of 2048 KiB pages"},
		{[]string{"--hugepages-1Gi", "1Gi", "--", "true"}, "needs CPUs of its own"},
		{[]string{"--hugepages-2Mi", "-2Mi", "--", "true"}, "--hugepages-2Mi"},
		{[]string{"--", "no-such-command-locus"}, "no-such-command-locus"},
		{[]string{"--cpus", "1"}, "no command given"},
	} {
		_, errOut, code := execLocus(t, bin, runArgs(sd, parent, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.msg) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line mentioning %q", tc.args, code, errOut, tc.msg)
		}
	}
	if _, errOut, code := execLocus(t, bin, "run", "--cgroup-parent", "/abs", "--state-dir", sd, "--", "true"); code != 2 {
		t.Errorf("absolute --cgroup-parent: exit %d, stderr %q; want 2", code, errOut)
	}
	if _, err := os.Stat(sd); err == nil {
		t.Errorf("bad input created the state directory %s", sd)
	}
	assertNothingLeftNoState(t, parent)
}

func assertNothingLeftNoState(t *testing.T, parent string) {
	t.Helper()
	for _, c := range v1Controllers {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, parent)); err == nil {
			t.Errorf("cgroup %s/%s is left behind", c, parent)
		}
	}
}

func TestRunDryRunChangesNothing(t *testing.T) {
	bin, sd, parent := kernelRun(t)
	out, errOut, code := execLocus(t, bin, runArgs(sd, parent, "--dry-run", "--cpus", "1",
		"--memory-limit", "100Mi", "--memory-request", "50Mi", "--memory-qos", "auto", "--", "true")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// auto is the recommended parameters: only the watermark files change.
	for _, want := range []string{"cpuset.cpus", "cpuset.mems                  0", "memory.limit_in_bytes        104857600",
		"memory.wmark_ratio           95", parent + "/run-"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(sd); err == nil {
		t.Errorf("dry run created the state directory")
	}
	assertNothingLeftNoState(t, parent)
}

func TestRunForwardsSIGTERM(t *testing.T) {
	bin, sd, parent := kernelRun(t)
	// sh waits for a sleep that is its child: SIGTERM kills sh, and the
	// orphaned sleep, still in the cgroup, must be cleaned up too.
	cmd := exec.Command(bin, runArgs(sd, parent, "--cpus", "1", "--", "sh", "-c", "echo ready; sleep 30")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("command did not start: %q %v", line, err)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Fatalf("exit %d (%v), want 143 = 128+SIGTERM; stderr %s", code, cmd.ProcessState, errb.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s to stop", d)
	}
	assertNothingLeft(t, sd, parent)
}

// A lease whose owner died with its cgroup empty is collected by the next run.
func TestRunCollectsStaleLease(t *testing.T) {
	bin, sd, parent := kernelRun(t)
	store, err := state.Open(sd)
	if err != nil {
		t.Fatal(err)
	}
	raw := `{"version":1,"leases":{"run-1":{"cgroup":"` + parent + `/run-1","assignment":{"cpus":"0-1","policy":"full-pcpus"},"owner":{"pid":999999999,"startTime":1}}}}`
	var cp state.Checkpoint
	if err := json.Unmarshal([]byte(raw), &cp); err != nil {
		t.Fatal(err)
	}
	if err := store.Save(cp); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := execLocus(t, bin, runArgs(sd, parent, "--cpus", "2", "--", "true")...); code != 0 {
		t.Fatalf("exit %d: a dead owner's lease still holds its CPUs: %s", code, errOut)
	}
	assertNothingLeft(t, sd, parent)
}

// The dry run reads the agent's HostConfig (reserved CPUs, BE pool, cgroup
// parent) and the live leases of the checkpoint, on a fixture machine: no
// root and no real cgroup needed.
func TestRunDryRunFollowsAgentConfigAndLeases(t *testing.T) {
	sys := fixtureTree(t, "small-1s-4c") // CPUs 0-3, one node, no SMT
	dir := t.TempDir()
	cfg := filepath.Join(dir, "host.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"0\"\n"+
		"bePool: \"3\"\ncgroupParent: agent.slice\nworkloads: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sd := filepath.Join(dir, "state")
	store, err := state.Open(sd)
	if err != nil {
		t.Fatal(err)
	}
	me, err := runner.Self()
	if err != nil {
		t.Fatal(err)
	}
	cp := state.Empty()
	cp.Leases["run-1"] = state.Lease{Cgroup: "agent.slice/run-1", Owner: me,
		Assignment: workload.Assignment{CPUs: cpuset.New(1), Policy: cpualloc.FullPCPUs}}
	if err := store.Save(cp); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--dry-run", "--sysfs-root", sys, "--cgroup-root", dir, "--cgroup-version", "v1",
		"--state-dir", sd, "--config", cfg}
	for _, tc := range []struct {
		args       []string
		cpus, pool string
	}{
		{[]string{"--cpus", "1"}, "2", "exclusive"},                        // 0 reserved, 1 leased
		{nil, "2-3", "shared"},                                             // neither reserved nor leased
		{[]string{"--qos", "be"}, "3", "be"},                               // the agent's BE pool
		{[]string{"--reserved-cpus", "", "--cpus", "1"}, "0", "exclusive"}, // the flag beats the config
	} {
		out, err := runLocus(t, append(append(base, tc.args...), "--", "true")...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !strings.Contains(out, "cpuset.cpus                  "+tc.cpus+"\n") ||
			!strings.Contains(out, "pool                         "+tc.pool+"\n") ||
			!strings.Contains(out, "cgroup                       agent.slice/run-") {
			t.Errorf("%v: dry run says\n%s\nwant cpus %s in pool %s under agent.slice", tc.args, out, tc.cpus, tc.pool)
		}
		// The fixture kernel has no cpu.idle: a BE run gets the lowest weight.
		if be := strings.Contains(out, "cpu.shares                   2\n"); be != (tc.pool == "be") {
			t.Errorf("%v: cpu.shares 2 written: %v, want it for BE runs only:\n%s", tc.args, be, out)
		}
	}
	if _, err := runLocus(t, append(base, "--cpus", "3", "--", "true")...); !errors.As(err, new(usageError)) ||
		!strings.Contains(err.Error(), "not enough free CPUs") {
		t.Errorf("--cpus 3 with one CPU reserved and one leased: %v, want a usage error", err)
	}
}

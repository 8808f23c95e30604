package agent

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/topology"
)

// guestAgent is `locus agent --standalone` run as a process of its own, so
// that a test can SIGKILL it where it likes and start it again on the same
// state directory, as a crash and a restart would.
type guestAgent struct {
	t              *testing.T
	cfg, state     string
	addr           string
	cmd            *exec.Cmd
	exited         chan struct{} // closed once cmd is reaped
	parent, budget string
	began          time.Time
}

// newGuestAgent is an agent of t's own under the cgroup parent; at t's end
// (after the agent is killed) what it started is killed and its cgroups
// removed, so that one subtest's workloads do not take the emulated CPUs
// of the next.
func newGuestAgent(t *testing.T, parent string, port int) *guestAgent {
	dir := t.TempDir()
	t.Cleanup(func() { removeDirs(t, filepath.Join(cgroup.DefaultRoot, parent)) })
	return &guestAgent{t: t, cfg: filepath.Join(dir, "host.yaml"), state: filepath.Join(dir, "state"),
		addr: fmt.Sprintf("127.0.0.1:%d", port), parent: parent, budget: "20ms", began: time.Now()}
}

// step logs how far the test got and when: under an emulator on a loaded
// host a step can take minutes, and -test.v streams the line at once, so
// the console shows where a slow run is.
func (g *guestAgent) step(format string, args ...any) {
	g.t.Helper()
	g.t.Logf("[%5.1f s] %s", time.Since(g.began).Seconds(), fmt.Sprintf(format, args...))
}

// start runs the agent; extra are more flags (--debug-write-delay).
func (g *guestAgent) start(extra ...string) {
	g.t.Helper()
	args := append([]string{"agent", "--standalone", "--config", g.cfg, "--state-dir", g.state, "--resync", "1s",
		"--config-settle", "100ms", "--metrics-addr", g.addr, "--locality-budget", g.budget,
		"--locality-margin", "16Mi", "--stop-grace", "1s"}, extra...)
	g.cmd = exec.Command(guestLocus, args...)
	log, err := os.OpenFile(filepath.Join(filepath.Dir(g.cfg), "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		g.t.Fatal(err)
	}
	g.cmd.Stdout, g.cmd.Stderr = log, log
	if err := g.cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	cmd, exited := g.cmd, make(chan struct{})
	g.exited = exited
	go func() { _ = cmd.Wait(); close(exited) }()
	g.t.Cleanup(func() { _ = cmd.Process.Kill(); waitAtMost(exited, 30*time.Second) })
}

// kill SIGKILLs the agent, as a crash would.
func (g *guestAgent) kill() {
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	waitAtMost(g.exited, 30*time.Second)
}

func (g *guestAgent) write(cfg string) {
	g.t.Helper()
	if err := writeSettled(g.cfg, []byte(cfg)); err != nil {
		g.t.Fatal(err)
	}
}

func (g *guestAgent) checkpoint() state.Checkpoint {
	g.t.Helper()
	c, err := (&state.Store{Dir: g.state}).Load()
	if err != nil {
		g.t.Fatal(err)
	}
	return c
}

// cpus is the cpuset.cpus of a workload's cgroup now (empty when unknown).
func (g *guestAgent) cpus(name string) cpuset.CPUSet {
	raw, err := os.ReadFile(filepath.Join(cgroup.DefaultRoot, g.parent, name, "cpuset.cpus"))
	if err != nil {
		return cpuset.New()
	}
	s, _ := topology.ParseCPUList(strings.TrimSpace(string(raw)))
	return s
}

// pid is the process the agent started for a workload, 0 if none yet.
func (g *guestAgent) pid(name string) int {
	if p := g.checkpoint().Workloads[name].Started; p != nil {
		return p.PID
	}
	return 0
}

// metric scrapes one series of the agent's /metrics for a workload.
func (g *guestAgent) metric(name, workload string) (float64, bool) {
	resp, err := http.Get("http://" + g.addr + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, name+"{") && strings.Contains(line, `workload="`+workload+`"`) {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// alive says whether pid runs (and is not a zombie).
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(raw), ") ")
	return !strings.HasPrefix(after, "Z")
}

// touchInterval is how often the movers' `locus stress --verify` reads,
// writes back and checksums all their memory. Under the emulator a pass
// over tens of MiB takes a good part of a second of a vCPU; every 200 ms
// kept three vCPUs busy all the time and starved the agent on a loaded
// host. The check that proves a move kept the data is the one at exit
// (verifiedExit), after the move, whatever the interval.
const touchInterval = "1s"

// movesSwitch is the HostConfig's moves: off, on, or on with rebalancing.
type movesSwitch int

const (
	movesOff movesSwitch = iota
	movesOn
	movesRebalance
)

// movesHostConfig is the guest's HostConfig: reserved CPUs, the workloads
// given as "name:cpus:MiB:movable" (MiB 0: sleep instead of stress) with
// an optional fifth field "busy" (stress also burns one CPU).
func movesHostConfig(parent, reserved string, moves movesSwitch, ws ...string) string {
	cfg := fmt.Sprintf("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: %q\ncgroupParent: %s\nmoves: {enabled: %v, rebalance: %v}\nworkloads:\n",
		reserved, parent, moves != movesOff, moves == movesRebalance)
	for _, w := range ws {
		f := strings.Split(w, ":")
		cmd := `[sleep, "600"]`
		if f[2] != "0" {
			cmd = fmt.Sprintf("[%s, stress, --memory, %sMi, --verify, --touch-interval, %s]", guestLocus, f[2], touchInterval)
		}
		if len(f) > 4 && f[4] == "busy" {
			cmd = strings.Replace(cmd, "stress,", `stress, --cpu, "1",`, 1)
		}
		cfg += fmt.Sprintf("- name: %s\n  command: %s\n  qosClass: LS\n  movable: %s\n  resources: {limits: {cpu: \"%s\"}}\n  annotations: {cpuset-scheduler: \"true\"}\n",
			f[0], cmd, f[3], f[1])
	}
	return cfg
}

// pollFor is pollFor, saying on a timeout whether the agent still runs and
// what it logged last.
func (g *guestAgent) pollFor(d time.Duration, what string, cond func() bool) {
	g.t.Helper()
	// Every 200 ms: each poll reads the checkpoint and /proc, which costs
	// the emulated guest the CPU the agent needs.
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return
		}
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(g.cfg), "agent.log"))
	if len(log) > 4000 {
		log = log[len(log)-4000:]
	}
	exited := waitAtMost(g.exited, 0)
	var where string
	if !exited {
		where = g.stacks()
	}
	g.t.Fatalf("%s: not within %v (agent exited: %v); its log ends:\n%s%s", what, d, exited, log, where)
}

// verifiedExit stops a mover with SIGTERM, on which `locus stress --verify`
// checks its memory's checksum one last time and logs its summary, and
// fails unless that summary says the memory was intact: the proof that a
// move made before kept the data, whatever the touch interval.
func (g *guestAgent) verifiedExit(name string, pid int) string {
	g.t.Helper()
	logFile := filepath.Join(g.state, "logs", name+".log")
	before, _ := os.ReadFile(logFile)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		g.t.Fatalf("SIGTERM %s (pid %d): %v", name, pid, err)
	}
	g.pollFor(2*time.Minute, name+" exited on SIGTERM", func() bool { return !alive(pid) })
	var out string
	g.pollFor(30*time.Second, name+"'s summary in "+logFile, func() bool {
		raw, _ := os.ReadFile(logFile)
		out = string(raw[min(len(before), len(raw)):])
		return strings.Contains(out, "locus stress: ran")
	})
	time.Sleep(500 * time.Millisecond) // an error is logged after the summary
	raw, _ := os.ReadFile(logFile)
	out = strings.TrimSpace(string(raw[min(len(before), len(raw)):]))
	if strings.Contains(out, "corrupted") || strings.Contains(out, "checksum changed") || !strings.Contains(out, "verification(s)") {
		g.t.Errorf("%s's memory did not check out at exit: %s", name, out)
	}
	return out
}

// anonOn is a workload's anonymous memory as its cgroup's memory.numa_stat
// counts it, in bytes: on nodes, and in all. That is the workload's own
// memory, as the agent and the move planner count it. The pages of
// /usr/bin/locus that its process maps are not: the agent and the other
// movers map them too, the kernel moves only pages mapped once, and they
// are charged to whoever read them first.
func (g *guestAgent) anonOn(name string, nodes []int) (on, total uint64, err error) {
	raw, err := os.ReadFile(filepath.Join(cgroup.DefaultRoot, g.parent, name, "memory.numa_stat"))
	if err != nil {
		return 0, 0, err
	}
	byNode, err := cgroup.ParseNumaStat(string(raw), []string{"anon"}, 1)
	if err != nil {
		return 0, 0, err
	}
	for node, b := range byNode {
		total += b
		if slices.Contains(nodes, node) {
			on += b
		}
	}
	return on, total, nil
}

// filled says whether a workload's cgroup holds at least mib MiB of
// anonymous memory: its `locus stress` has filled its buffer.
func (g *guestAgent) filled(name string, mib int) bool {
	_, total, err := g.anonOn(name, nil)
	return err == nil && total >= uint64(mib)<<20
}

// localOn waits until ≥ 99 % of a workload's memory (anonOn) is on nodes,
// and returns the bytes there and in all.
func (g *guestAgent) localOn(name string, nodes []int) (on, total uint64) {
	g.t.Helper()
	var err error
	// On cgroup v2 the memory locality worker alone moves it (cpuset.mems
	// stays wide), and under the emulator on a loaded host each of its
	// calls waits for every vCPU: a busy workload's 8 MiB took over 2
	// minutes at load average 30.
	g.pollFor(6*time.Minute, name+"'s memory ≥ 99 % on NUMA nodes "+fmt.Sprint(nodes), func() bool {
		on, total, err = g.anonOn(name, nodes)
		return err == nil && total > 0 && on*100 >= total*99
	})
	return on, total
}

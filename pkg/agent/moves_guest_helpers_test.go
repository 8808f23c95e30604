package agent

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	parent, budget string
}

func newGuestAgent(t *testing.T, parent string, port int) *guestAgent {
	dir := t.TempDir()
	return &guestAgent{t: t, cfg: filepath.Join(dir, "host.yaml"), state: filepath.Join(dir, "state"),
		addr: fmt.Sprintf("127.0.0.1:%d", port), parent: parent, budget: "20ms"}
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
	cmd := g.cmd
	g.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// kill SIGKILLs the agent, as a crash would.
func (g *guestAgent) kill() {
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	_ = g.cmd.Wait()
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

// movesHostConfig is the guest's HostConfig: CPU 7 reserved, the workloads
// given as "name:cpus:MiB:movable" (MiB 0: sleep instead of stress).
func movesHostConfig(parent string, moves bool, ws ...string) string {
	cfg := fmt.Sprintf("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"7\"\ncgroupParent: %s\nmoves: {enabled: %v}\nworkloads:\n", parent, moves)
	for _, w := range ws {
		f := strings.Split(w, ":")
		cmd := `[sleep, "600"]`
		if f[2] != "0" {
			cmd = fmt.Sprintf("[%s, stress, --memory, %sMi, --verify, --touch-interval, 200ms]", guestLocus, f[2])
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
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(g.cfg), "agent.log"))
	if len(log) > 4000 {
		log = log[len(log)-4000:]
	}
	exited := g.cmd.ProcessState != nil || g.cmd.Process.Signal(syscall.Signal(0)) != nil
	g.t.Fatalf("%s: not within %v (agent exited: %v); its log ends:\n%s", what, d, exited, log)
}

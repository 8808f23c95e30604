package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/view"
)

// topAgent is a standalone agent running the example HostConfig on a
// fixture machine (2 sockets, 3 NUMA nodes, 32 CPUs) and a fixture cgroup
// v2 tree, serving its metrics address, stopped at cleanup.
type topAgent struct {
	bin, addr, stateDir, sysfs, cgroups string
}

// exampleWorkloads are the workloads of examples/hostconfig.yaml.
var exampleWorkloads = []string{"batch", "redis", "vm1"}

func startTopAgent(t *testing.T) topAgent {
	t.Helper()
	a := topAgent{bin: locusBinary(t), sysfs: fixtureTree(t, "2s-8c-ht-memnode")}
	dir := t.TempDir()
	a.stateDir, a.cgroups = filepath.Join(dir, "state"), filepath.Join(dir, "cgroup")
	files := map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory",
		"cgroup.procs": "", "cpuset.cpus": "0-31", "cpuset.mems": "0-2", "cpu.max": "max 100000", "cpu.weight": "100",
		"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.max": "max"}
	// The cgroups the example names or makes: in a fixture tree the kernel
	// does not fill new directories, so they are laid out beforehand.
	for _, rel := range []string{"", "system.slice", "system.slice/redis-server.service", "locus.slice", "locus.slice/batch", "locus.slice/vm1"} {
		writeFiles(t, filepath.Join(a.cgroups, rel), files)
	}
	writeFiles(t, filepath.Join(a.cgroups, "system.slice/redis-server.service"), map[string]string{
		"memory.numa_stat": "anon N0=1610612736 N1=268435456 N2=0\nfile N0=0 N1=0 N2=0", "cpu.stat": "usage_usec 1000"})

	// The example as shipped, but its BE job a harmless sleep that the agent
	// stops when it exits.
	raw, err := os.ReadFile("../../examples/hostconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(raw)
	for old, repl := range map[string]string{
		`command: ["stress-ng", "--vm", "1", "--vm-bytes", "512M"]`: `command: ["sleep", "600"]`,
		"  qosClass: BE\n": "  qosClass: BE\n  annotations: {locus.io/stop-on-agent-exit: \"true\"}\n",
	} {
		if strings.Count(cfg, old) != 1 {
			t.Fatalf("examples/hostconfig.yaml changed: %q no longer appears once; update this test", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	cfgFile := filepath.Join(dir, "host.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	a.addr = freeAddr(t)
	cmd := exec.Command(a.bin, "agent", "--standalone", "--config", cfgFile, "--state-dir", a.stateDir,
		"--sysfs-root", a.sysfs, "--cgroup-root", a.cgroups, "--cgroup-version", "v2", "--metrics-addr", a.addr)
	log, err := os.Create(filepath.Join(dir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
	// Ready once it serves a decision for every example workload.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if snap, err := agentSnapshot(a.addr); err == nil && snap.Agent && len(snap.Workloads) == len(exampleWorkloads) {
			return a
		}
		select {
		case <-done:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("the agent exited:\n%s", out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("the agent did not serve its workloads at %s:\n%s", a.addr, out)
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func agentSnapshot(addr string) (view.Snapshot, error) {
	resp, err := http.Get("http://" + addr + "/ui/snapshot.json")
	if err != nil {
		return view.Snapshot{}, err
	}
	defer resp.Body.Close()
	var snap view.Snapshot
	err = json.NewDecoder(resp.Body).Decode(&snap)
	return snap, err
}

// workloadRows finds the table rows of a frame: the workload's marker,
// then its name, then the columns. It returns the names in order and each
// row's fields.
func workloadRows(frame string) ([]string, map[string][]string) {
	var order []string
	rows := map[string][]string{}
	for _, line := range strings.Split(frame, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || len(f[0]) != 1 {
			continue
		}
		if f[2] == "!" { // a workload with problems
			f = append(f[:2:2], f[3:]...)
		}
		for _, name := range exampleWorkloads {
			if f[1] == name {
				order = append(order, name)
				rows[name] = f[1:]
			}
		}
	}
	return order, rows
}

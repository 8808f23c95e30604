package agent

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/topology"
)

// inGuest says whether the test runs in the NUMA test guest (test/numavm),
// where a missing feature is a failure, not a reason to skip.
func inGuest() bool { return os.Getenv("LOCUS_NUMAVM") == "1" }

// skipOrFail skips on an ordinary host and fails in the guest.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if inGuest() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+" (the NUMA test guest has it: bash test/numavm/run.sh --pkgs ./pkg/agent)", args...)
}

// realV2 needs root on cgroup v2 with the cpuset controller handed down from
// the root and at least two CPUs, and returns a cgroup parent of the test's
// own that is removed at cleanup (its processes killed, children first).
func realV2(t *testing.T) string {
	t.Helper()
	if inGuest() && os.Getenv("LOCUS_NUMAVM_CGROUP") == "v1" {
		t.Skip("the guest booted with cgroup v1 controllers (--cgroup v1)")
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "real-kernel test needs root")
	}
	if v, err := cgroup.Detect(cgroup.DefaultRoot); err != nil || v != cgroup.V2 {
		skipOrFail(t, "no cgroup v2 at %s (%v)", cgroup.DefaultRoot, err)
	}
	ctl, _ := os.ReadFile(filepath.Join(cgroup.DefaultRoot, "cgroup.subtree_control"))
	if !slices.Contains(strings.Fields(string(ctl)), "cpuset") {
		skipOrFail(t, "the cgroup v2 root does not hand the cpuset controller down (subtree_control %q)", strings.TrimSpace(string(ctl)))
	}
	if cpus, _ := os.ReadFile(filepath.Join(cgroup.DefaultRoot, "cpuset.cpus.effective")); strings.TrimSpace(string(cpus)) == "0" {
		skipOrFail(t, "needs at least two CPUs")
	}
	parent := fmt.Sprintf("locus-test-%d-%s", os.Getpid(), strings.ToLower(strings.TrimPrefix(t.Name(), "Test")))
	t.Cleanup(func() { removeTreeV2(t, parent) })
	return parent
}

// removeTreeV2 kills what is left in the test's v2 sub-tree and removes it.
func removeTreeV2(t *testing.T, parent string) {
	removeDirs(t, filepath.Join(cgroup.DefaultRoot, parent))
}

func readV2(t *testing.T, rel, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cgroup.DefaultRoot, rel, file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// pollFor waits up to d for cond; the guest runs under an emulator, so
// waits are generous.
func pollFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %v", what, d)
}

// realV2Agent writes cfg and starts an agent on the real cgroup v2 tree.
func realV2Agent(t *testing.T, cfg string, mod func(*Options)) (*Agent, string) {
	t.Helper()
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "host.yaml")
	if err := writeSettled(cfgFile, []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	o := Options{ConfigFile: cfgFile, StateDir: filepath.Join(dir, "state"), CgroupVersion: cgroup.V2,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StopGrace: 2 * time.Second}
	if mod != nil {
		mod(&o)
	}
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, cfgFile
}

func mustReconcile(t *testing.T, a *Agent) Result {
	t.Helper()
	res := a.Reconcile()
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

// TestRealKernelV2 is TestRealKernelV1 on cgroup v2: cpuset.cpus and
// cpuset.mems of the one cgroup per workload, the processes' affinity, the
// memory QoS files, a reconcile at rest writing nothing, and removal.
func TestRealKernelV2(t *testing.T) {
	parent := realV2(t)
	cfg := fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
cgroupParent: %s
workloads:
- name: ls
  command: [sleep, "600"]
  qosClass: LS
  resources: {requests: {memory: 32Mi}, limits: {cpu: "1", memory: 64Mi}}
  annotations: {cpuset-scheduler: "true", koordinator.sh/memoryQOS: '{"policy": "auto", "lowLimitPercent": 100, "throttlingPercent": 80}'}
- name: be
  command: [sleep, "600"]
  qosClass: BE
`, parent)
	a, cfgFile := realV2Agent(t, cfg, nil)
	mustReconcile(t, a)
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	ck, _ := a.store.Load()
	excl := ck.Assignments["ls"].CPUs
	if excl.Size() != 1 {
		t.Fatalf("ls assigned %q, want one CPU", excl)
	}
	all, _ := cpuset.Parse(readV2(t, "", "cpuset.cpus.effective"))
	shared := all.Difference(excl)
	nodeList := func(c cpuset.CPUSet) string {
		ids := topo.NodesOf(c)
		return cpuset.New(ids...).String()
	}
	for name, want := range map[string]cpuset.CPUSet{"ls": excl, "be": shared} {
		p := ck.Workloads[name].Started
		if p == nil {
			t.Fatalf("%s not started", name)
		}
		rel := parent + "/" + name
		pollFor(t, 10*time.Second, name+" execs sleep", func() bool { c, _ := procfs.New("").Comm(p.PID); return c == "sleep" })
		if got := cpusAllowed(t, p.PID); got != want.String() {
			t.Errorf("%s: process %d Cpus_allowed_list = %s, want %s", name, p.PID, got, want)
		}
		if got := readV2(t, rel, "cpuset.cpus"); got != want.String() {
			t.Errorf("%s: cpuset.cpus = %s, want %s", name, got, want)
		}
		if got := readV2(t, rel, "cpuset.mems"); got != nodeList(want) {
			t.Errorf("%s: cpuset.mems = %s, want the nodes of its CPUs %s", name, got, nodeList(want))
		}
		if procs := readV2(t, rel, "cgroup.procs"); procs != fmt.Sprint(p.PID) {
			t.Errorf("%s: cgroup.procs = %q, want the started pid %d", name, procs, p.PID)
		}
	}
	// LS auto with lowLimitPercent 100 and throttlingPercent 80: memory.low = the request (32 MiB), memory.high = 80 % of the
	// limit, which the kernel keeps in whole pages.
	if got := readV2(t, parent+"/ls", "memory.low"); got != "33554432" {
		t.Errorf("ls memory.low = %s, want 33554432", got)
	}
	if got := readV2(t, parent+"/ls", "memory.high"); got != "53686272" && got != "53687091" {
		t.Errorf("ls memory.high = %s, want 80 %% of 64 MiB", got)
	}
	if res := mustReconcile(t, a); res.Writes != 0 {
		t.Errorf("second reconcile: %d writes, want none", res.Writes)
	}

	// Dropping ls stops it, removes its cgroup, and gives its CPU back.
	lsPID := ck.Workloads["ls"].Started
	cfg = cfg[:strings.Index(cfg, "- name: ls")] + cfg[strings.Index(cfg, "- name: be"):]
	if err := writeSettled(cfgFile, []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	mustReconcile(t, a)
	if procfs.New("").Alive(lsPID.PID, lsPID.StartTime) {
		t.Error("removed workload's process still runs")
	}
	if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, parent, "ls")); !os.IsNotExist(err) {
		t.Errorf("cgroup of ls not removed: %v", err)
	}
	if got := readV2(t, parent+"/be", "cpuset.cpus"); got != all.String() {
		t.Errorf("be cpuset.cpus = %s, want every CPU %s once ls is gone", got, all)
	}
	if got := readV2(t, parent+"/be", "cpuset.mems"); got != nodeList(all) {
		t.Errorf("be cpuset.mems = %s, want %s", got, nodeList(all))
	}

	// Dropping everything removes the whole sub-tree Locus created.
	if err := writeSettled(cfgFile, []byte(cfg[:strings.Index(cfg, "workloads:")]+"workloads: []\n")); err != nil {
		t.Fatal(err)
	}
	mustReconcile(t, a)
	if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, parent)); !os.IsNotExist(err) {
		t.Errorf("created parent %s not removed: %v", parent, err)
	}
}

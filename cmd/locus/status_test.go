package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
)

// statusDir writes a state dir holding a status an agent wrote a minute ago.
func statusDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st := status.Status{Time: time.Now().Add(-time.Minute)}
	st.Node.Exclusive, st.Node.Shared, st.Node.BE = "0", "1", "1"
	st.Node.Pinning = &status.Pinning{Path: status.PinAfterStart, Reason: "the NRI socket does not exist",
		CgroupWatch: &status.CgroupWatch{Watched: 12, EarlyWrites: 7}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "status.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestStatusSaysWhetherTheAgentRuns(t *testing.T) {
	dir := statusDir(t)
	out, err := runLocus(t, "status", "--state-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "not running") || !strings.Contains(err.Error(), "1m0s old") {
		t.Fatalf("no agent: error %v, want one saying it is not running and how old the status is", err)
	}
	if !strings.Contains(out, "pinning: after start, by the reconcile loop (the NRI socket does not exist); cgroup watch on, 12 directories, 7 new containers given their pod's cpuset as their cgroup appeared") {
		t.Errorf("the pinning path and the cgroup watch are not shown:\n%s", out)
	}
	if !strings.Contains(out, "CPU lists: exclusive 0, shared 1, be 1") {
		t.Errorf("pools are not labelled as CPU lists:\n%s", out)
	}
	// An agent holds its lock: the same status is current.
	lock, err := os.OpenFile(filepath.Join(dir, state.AgentLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if out, err := runLocus(t, "status", "--state-dir", dir); err != nil || strings.Contains(out, "not running") {
		t.Fatalf("with the lock held: %v\n%s", err, out)
	}
}

// As an ordinary user, the root-only state dir is a matter of privilege,
// not a bare "permission denied".
func TestStatusAsNonRootSaysItNeedsRoot(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if testing.Short() || os.Geteuid() != 0 || err != nil {
		t.Skip("runs locus as nobody (needs root and setpriv)")
	}
	bin := locusBinary(t)
	_ = os.Chmod(filepath.Dir(bin), 0o755)
	dir := statusDir(t)
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "status", "--state-dir", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs root") || strings.Contains(string(out), "permission denied") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// The host checks the agent ran at start: a count, and the ones not ok in
// full, each on one line.
func TestStatusShowsHostChecks(t *testing.T) {
	var out strings.Builder
	renderHostChecks(&out, []status.HostCheck{
		{Check: "cgroup-version", Status: "ok", Found: "cgroup v2"},
		{Check: "numa-balancing", Status: "warn", Found: "kernel.numa_balancing = 1\n(on)", Do: "sysctl kernel.numa_balancing=0"},
		{Check: "kubelet-cpu-manager", Status: "fail", Found: "cpuManagerPolicy: static"},
		{Check: "runtime-nri", Status: "n/a", Found: "no NRI socket"},
	})
	want := "host checks at agent start: 1 ok, 1 warn, 1 fail, 1 n/a (locus doctor for all)\n" +
		"host check warn numa-balancing: kernel.numa_balancing = 1 (on); do: sysctl kernel.numa_balancing=0\n" +
		"host check fail kubelet-cpu-manager: cpuManagerPolicy: static\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	renderHostChecks(&out, nil) // a status from an agent without host checks
	if out.Len() != 0 {
		t.Errorf("no checks printed %q", out.String())
	}
}

// Beside the kubelet, locus status names its policies, its CPUs and the
// files it could not read.
func TestStatusShowsTheKubelet(t *testing.T) {
	st := status.Status{Time: time.Now()}
	st.Node.KubeletCPUs = "2-3"
	st.Node.Kubelet = &kubelet.Summary{CPUManagerPolicy: "static", TopologyManagerPolicy: "single-numa-node",
		TopologyManagerScope: "pod", MemoryManagerPolicy: "None", ReservedCPUs: "0",
		Errors: []string{"/var/lib/kubelet/memory_manager_state: checksum"}}
	var b strings.Builder
	if err := renderStatus(&b, st, true, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubelet: CPU manager static (its CPUs 2-3), topology manager single-numa-node/pod, memory manager None, reservedSystemCPUs 0",
		"kubelet file unreadable: /var/lib/kubelet/memory_manager_state: checksum"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}

// locus status says where the devices pods hold were read, or why none
// are known, in one line.
func TestStatusShowsTheDeviceSource(t *testing.T) {
	for _, tc := range []struct {
		d    status.Devices
		want string
	}{
		{status.Devices{Source: "/var/lib/kubelet/pod-resources/kubelet.sock", Containers: 1, Held: 2, Allocatable: 4, WithTopology: 3},
			"devices: from the kubelet's PodResources (/var/lib/kubelet/pod-resources/kubelet.sock): 1 containers hold 2 devices; the plugins offer 4, 3 with NUMA nodes\n"},
		{status.Devices{Source: "/x.sock", Problem: "/x.sock: no socket\nsecond line"}, "devices: none known: /x.sock: no socket"},
	} {
		st := status.Status{Time: time.Now()}
		st.Node.Devices = &tc.d
		var b strings.Builder
		if err := renderStatus(&b, st, true, 0); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "\nsecond line") {
			t.Errorf("status lacks %q:\n%s", tc.want, b.String())
		}
	}
}

// TestCPUSummaryBurst: the CPU column adds CPU Burst's buffer and, while
// the quota raise is on, the quota read back, on v1 and v2 files alike.
func TestCPUSummaryBurst(t *testing.T) {
	for _, tc := range []struct {
		c    status.CPUQoSStatus
		want string
	}{
		{status.CPUQoSStatus{Reason: "x: off", Values: map[string]string{"cpu.cfs_burst_us": "0", "cpu.cfs_quota_us": "50000"}}, "off"},
		{status.CPUQoSStatus{Reason: "x: off", Values: map[string]string{"cpu.cfs_burst_us": "30000"}}, "off,burst=30000us"},
		{status.CPUQoSStatus{Reason: "x: off", CFSQuotaBurst: "y", Values: map[string]string{"cpu.max.burst": "30000", "cpu.max": "60000 100000"}}, "off,burst=30000us,quota=60000"},
		{status.CPUQoSStatus{Reason: "x: off", CFSQuotaBurst: "y", Values: map[string]string{"cpu.max": " "}}, "off"},
	} {
		if got := cpuSummary(tc.c); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// The MEMORY column names what each workload holds on each node, "-" for
// none.
func TestStatusShowsMemoryByNode(t *testing.T) {
	st := status.Status{Time: time.Now(), Workloads: []status.WorkloadStatus{
		{Name: "db", Pool: "exclusive", CPUs: "2-3", NUMANodes: []int{0}, MemoryByNode: []status.NodeMemory{
			{Node: 0, Bytes: 4 << 30}, {Node: 1, Bytes: 1 << 29, HugePages2Mi: 64 << 20, HugePages1Gi: 2 << 30}}},
		{Name: "web", Pool: "shared", CPUs: "0-1"}}}
	var b strings.Builder
	if err := renderStatus(&b, st, true, 0); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	header, db, web := strings.Fields(lines[len(lines)-3]), strings.Fields(lines[len(lines)-2]), strings.Fields(lines[len(lines)-1])
	if header[5] != "MEMORY" || db[5] != "0:4.0GiB" || db[6] != "1:512.0MiB+hp2Mi:64.0MiB+hp1Gi:2.0GiB" || web[5] != "-" {
		t.Errorf("status table:\n%s", b.String())
	}
}

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// TestRealKernelCPUBurstV1 runs the agent on this host's cgroup v1, in a
// sub-tree of its own, with a busy workload under a CFS quota (0.5 CPU, as
// the kubelet would give a 500m limit): its CPU Burst buffer is written
// from its limit (cpu.cfs_burst_us = 500m x 60 % = 30000us) and restored
// when the policy goes; the quota is raised a step while it is throttled
// and the shared pool is not busy, and is back at the base afterwards.
func TestRealKernelCPUBurstV1(t *testing.T) {
	parent := realV1(t)
	if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, "cpu", "cpu.cfs_burst_us")); err != nil {
		t.Skip("this kernel has no cpu.cfs_burst_us (before Linux 5.14)")
	}
	base := fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
cgroupParent: %s
workloads:
- name: busy
  command: [sh, -c, "while :; do :; done"]
  qosClass: LS
  resources: {limits: {cpu: 500m}}
`, parent)
	on := base + "  cpuBurst: {policy: auto, cpuBurstPercent: 60, sharePoolThresholdPercent: 100}\n"
	a, write := realV1Agent(t, base)
	if !a.burst.Kernel() {
		t.Fatal("the probe missed cpu.cfs_burst_us on a kernel that has it")
	}
	reconcile := func() {
		t.Helper()
		if res := a.Reconcile(); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
	}
	reconcile()
	busy := parent + "/busy"
	// The quota the kubelet would give a 500m limit; Locus never sets it.
	if err := os.WriteFile(filepath.Join(cgroup.DefaultRoot, "cpu", busy, "cpu.cfs_quota_us"), []byte("50000"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(on)
	reconcile()
	if got := readCg(t, "cpu", busy, "cpu.cfs_burst_us"); got != "30000" {
		t.Fatalf("cpu.cfs_burst_us = %s, want 30000", got)
	}
	// Throttled every period: a reconcile or two later the quota rises,
	// unless the machine (2 CPUs, shared with other work) is busy enough to
	// hold the raise; then the status line says so.
	raised := int64(50000)
	for i := 0; i < 3 && raised == 50000; i++ {
		time.Sleep(300 * time.Millisecond)
		reconcile()
		raised, _ = strconv.ParseInt(readCg(t, "cpu", busy, "cpu.cfs_quota_us"), 10, 64)
	}
	if raised == 50000 {
		t.Logf("the quota was not raised (pool busy?): %s", a.pub.Current().Workloads[0].CPUQOS.CFSQuotaBurst)
	} else if raised < 60000 || raised > 150000 {
		t.Errorf("raised quota %d, want a step above 50000 and at most 300 %% of it", raised)
	}
	write(base)
	reconcile()
	if got, q := readCg(t, "cpu", busy, "cpu.cfs_burst_us"), readCg(t, "cpu", busy, "cpu.cfs_quota_us"); got != "0" || q != "50000" {
		t.Errorf("off: cpu.cfs_burst_us %s, cpu.cfs_quota_us %s; want 0 and 50000", got, q)
	}
	write(base[:strings.Index(base, "workloads:")] + "workloads: []\n")
	reconcile()
}

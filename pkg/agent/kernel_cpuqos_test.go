package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

// TestRealKernelCPUQoSV1 runs the agent on this host's cgroup v1, in a
// sub-tree of its own: the BE workload's group becomes SCHED_IDLE (cpu.idle
// 1, which the kernel shows as weight 3), the LS one keeps its weight, and
// switching CPU QoS off gives both back their originals (the weight too,
// which the kernel resets on leaving cpu.idle); as on a kernel
// without cpu.idle, the BE workload gets the lowest cpu.shares instead.
func TestRealKernelCPUQoSV1(t *testing.T) {
	parent := realV1(t)
	if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, "cpu", "cpu.idle")); err != nil {
		t.Skip("this kernel has no cpu.idle (before Linux 5.15)")
	}
	base := fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
cgroupParent: %s
workloads:
- name: ls
  command: [sleep, "600"]
  qosClass: LS
- name: be
  command: [sleep, "600"]
  qosClass: BE
`, parent)
	on := base + cpuQoSOn
	a, write := realV1Agent(t, base)
	if !a.cpuIdle {
		t.Fatal("the probe missed cpu.idle on a kernel that has it")
	}
	if res := a.Reconcile(); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	be, ls := parent+"/be", parent+"/ls"
	// A weight of the workload's own before CPU QoS (as the kubelet gives a
	// pod): leaving cpu.idle resets it to 1024, and Locus puts it back.
	if err := os.WriteFile(filepath.Join(cgroup.DefaultRoot, "cpu", be, "cpu.shares"), []byte("512"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(on)
	if res := a.Reconcile(); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	check := func(when string, want map[string]string) {
		t.Helper()
		for f, w := range want {
			rel, file, _ := strings.Cut(f, ":")
			if got := readCg(t, "cpu", rel, file); got != w {
				t.Errorf("%s: %s %s = %s, want %s", when, rel, file, got, w)
			}
		}
	}
	check("on", map[string]string{be + ":cpu.idle": "1", be + ":cpu.shares": "3", ls + ":cpu.idle": "0", ls + ":cpu.shares": "1024"})
	if res := a.Reconcile(); res.Writes != 0 || len(res.Errors) > 0 {
		t.Errorf("second reconcile: %d writes, errors %v", res.Writes, res.Errors)
	}
	write(base)
	if res := a.Reconcile(); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	check("off", map[string]string{be + ":cpu.idle": "0", be + ":cpu.shares": "512", ls + ":cpu.idle": "0"})
	// As on a kernel without cpu.idle: the lowest weight instead, restored too.
	a.cpuIdle = false
	for _, step := range []struct {
		cfg, shares string
	}{{on, "2"}, {base, "512"}} {
		write(step.cfg)
		if res := a.Reconcile(); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		check("without cpu.idle", map[string]string{be + ":cpu.idle": "0", be + ":cpu.shares": step.shares, ls + ":cpu.shares": "1024"})
	}
	write(base[:strings.Index(base, "workloads:")] + "workloads: []\n")
	if res := a.Reconcile(); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
}

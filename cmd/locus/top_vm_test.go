package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/status"
)

// locus top reads a VM from the agent's status file: its row, and a line
// naming its domain, its node and each vCPU's CPU.
func TestTopOnceShowsAVM(t *testing.T) {
	sysfs := fixtureTree(t, "small-1s-4c")
	dir := t.TempDir()
	state, cgroups := filepath.Join(dir, "state"), filepath.Join(dir, "cgroup")
	writeFiles(t, cgroups, map[string]string{"cgroup.controllers": "cpuset cpu memory", "cpuset.cpus": "0-3"})
	st := status.Status{Time: time.Now(), Node: status.NodeStatus{Reserved: "0", Exclusive: "2-3", Shared: "1"},
		Workloads: []status.WorkloadStatus{{Name: "db", Cgroup: "machine/qemu-3-db\\x2d1.libvirt-qemu", Pool: "exclusive",
			CPUs: "2-3", Mems: "0", NUMANodes: []int{0}, LibvirtDomain: "db-1",
			ContainerCPUs: map[string]string{"vcpu0": "2", "vcpu1": "3", "emulator": "1"}}}}
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := status.Write(state, st); err != nil {
		t.Fatal(err)
	}
	out, err := runLocus(t, "top", "--once", "--interval", "100ms", "--agent-addr", "", "--state-dir", state,
		"--sysfs-root", sysfs, "--cgroup-root", cgroups, "--cgroup-version", "v2", "--width", "100")
	if err != nil {
		t.Fatalf("locus top --once: %v\n%s", err, out)
	}
	if !strings.Contains(out, "  db  VM db-1 · node 0 · vcpu0 2 · vcpu1 3 · emulator 1\n") {
		t.Errorf("top --once shows no line for VM db-1:\n%s", out)
	}
}

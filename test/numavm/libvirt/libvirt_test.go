// Package libvirt runs real libvirt and QEMU (TCG) in the NUMA test guest
// with locus installed as numad and the standalone agent beside it: a
// domain placed by numad gets the nodes locus advised, and under a
// dedicated CPU policy each vCPU its own CPU. Outside the guest it skips:
// bash test/numavm/run.sh --pkgs ./test/numavm/libvirt runs it.
package libvirt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"
)

const (
	// startBound bounds libvirtd's start (it probes QEMU's capabilities
	// by running it) and a domain's, each a QEMU start under nested TCG:
	// at most 28 s and 63 s on a 2-CPU host at load average 25, and within
	// the guest's 5-minute -test.timeout together.
	startBound = 3 * time.Minute
	cgroupRoot = "/sys/fs/cgroup"
	vmName     = "locus-vm"
)

// guestNodes are the guest's nodes' CPUs, skipping outside the guest.
func guestNodes(t *testing.T) []cpuset.CPUSet {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("needs the NUMA test guest: bash test/numavm/run.sh --pkgs ./test/numavm/libvirt")
	}
	if v := os.Getenv("LOCUS_NUMAVM_CGROUP"); v != "v2" {
		t.Fatalf("LOCUS_NUMAVM_CGROUP=%q: this test reads the domain's cgroups on cgroup2", v)
	}
	var nodes []cpuset.CPUSet
	for _, s := range strings.Split(os.Getenv("LOCUS_NUMAVM_NODE_CPUS"), ";") {
		nodes = append(nodes, parse(t, "LOCUS_NUMAVM_NODE_CPUS", s))
	}
	if len(nodes) < 2 {
		t.Fatalf("LOCUS_NUMAVM_NODE_CPUS=%q: want two NUMA nodes at least", os.Getenv("LOCUS_NUMAVM_NODE_CPUS"))
	}
	return nodes
}

// TestLibvirtDomainUnderLocus: libvirt starts a domain whose placement is
// numad's with locus as numad, and its threads' cpusets are the nodes
// locus advised; the agent then pins each vCPU apart (cpuPolicy:
// dedicated), gives everything back when the workload leaves its config,
// changes nothing as it stops, and destroying the domain leaves no cgroup
// and no process behind.
func TestLibvirtDomainUnderLocus(t *testing.T) {
	nodes := guestNodes(t)
	startLibvirtd(t)
	advice, err := exec.Command("locus", "numad", "-w", "2:32").CombinedOutput()
	t.Logf("locus numad -w 2:32 before the domain: %q %v", advice, err)

	d := createDomain(t, vmName, 2)
	nodeset, cpus := d.numad(t)
	if nodeset.IsEmpty() {
		t.Fatal("libvirt kept an empty nodeset from numad")
	}
	var nodeCPUs cpuset.CPUSet
	for _, n := range nodeset.List() {
		if n >= len(nodes) {
			t.Fatalf("numad's nodeset %s names node %d; the guest has %d", nodeset, n, len(nodes))
		}
		nodeCPUs = nodeCPUs.Union(nodes[n])
	}
	if !cpus.IsEmpty() && !cpus.Equals(nodeCPUs) {
		t.Errorf("libvirt's numad cpuset %s, want the CPUs of nodes %s: %s", cpus, nodeset, nodeCPUs)
	}
	before := cpusets(t, d.threadCgroups())
	for cg, v := range before {
		if parse(t, cg, v[0]).Equals(nodeCPUs) && parse(t, cg, v[1]).Equals(nodeset) {
			continue
		}
		t.Errorf("%s: cpuset.cpus %s, cpuset.mems %s; want the advised nodes %s: CPUs %s", cg, v[0], v[1], nodeset, nodeCPUs)
	}
	t.Logf("numad (locus) advised nodes %s; the domain's threads: %v", nodeset, before)

	a := startAgent(t)
	pinned := a.dedicated(t, d)
	a.statusShowsVCPUs(t, pinned)
	a.release(t, d, before)
	a.stop(t)
	if after := cpusets(t, d.threadCgroups()); !equal(after, before) {
		t.Errorf("after the agent stopped the threads' cpusets are %v, want them as libvirt left them: %v", after, before)
	}

	virsh(t, time.Minute, "destroy", vmName)
	waitFor(t, "the domain's cgroup removed and QEMU gone", time.Minute, func() (bool, string) {
		if _, err := os.Stat(filepath.Join(cgroupRoot, d.cgroup)); err == nil {
			return false, d.cgroup + " still there"
		}
		if pids := qemuPIDs(); len(pids) > 0 {
			return false, "qemu still running: " + strings.Join(pids, " ")
		}
		return true, ""
	})
}

func equal(a, b map[string][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// qemuPIDs are the processes whose command name is QEMU's.
func qemuPIDs() []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && strings.HasPrefix(string(comm), "qemu-system") {
			out = append(out, e.Name())
		}
	}
	return out
}

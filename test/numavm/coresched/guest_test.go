// Package coresched exercises core isolation (pkg/coresched, the agent's
// locus.io/core-isolation) on a kernel that has core scheduling: the NUMA
// test guest booted with Ubuntu's kernel and two threads a core,
//
//	bash test/numavm/run.sh --kernel ubuntu --threads 2 --tcg single --pkgs ./test/numavm/coresched
//
// It drives the real locus binary, as the other guest tests do. Outside the
// guest, or in a guest without SMT, the tests skip, saying so.
package coresched

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// guest skips outside a guest booted with SMT. Inside one, everything else
// must hold: the guest run is what proves the feature.
func guest(t *testing.T) {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("runs only inside the NUMA test guest: bash test/numavm/run.sh --kernel ubuntu --threads 2 --tcg single --pkgs ./test/numavm/coresched")
	}
	if n, _ := strconv.Atoi(os.Getenv("LOCUS_NUMAVM_THREADS")); n < 2 {
		t.Skipf("LOCUS_NUMAVM_THREADS=%q: core scheduling needs SMT; boot with --threads 2", os.Getenv("LOCUS_NUMAVM_THREADS"))
	}
	// The test does not seed the kernel's random number generator: the
	// guest has no hardware RNG, so until something does, every cookie
	// reads 0. The agent's probe (coresched.Probe) must wait for it, and
	// the cookies read below are its proof.
}

// readSys reads one sysfs attribute, failing the test when it cannot.
func readSys(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// siblings is the thread_siblings_list of a CPU.
func siblings(t *testing.T, cpu int) cpuset.CPUSet {
	t.Helper()
	path := "/sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/topology/thread_siblings_list"
	s := readSys(t, path)
	set, err := topology.ParseCPUList(s)
	if err != nil {
		t.Fatalf("%s: %q: %v", path, s, err)
	}
	return set
}

// TestSMT: the kernel believes the topology QEMU reports: SMT is active and
// every core's threads are consecutive CPUs in one NUMA node.
func TestSMT(t *testing.T) {
	guest(t)
	if got := readSys(t, "/sys/devices/system/cpu/smt/active"); got != "1" {
		t.Fatalf("smt/active is %q, want 1", got)
	}
	threads, _ := strconv.Atoi(os.Getenv("LOCUS_NUMAVM_THREADS"))
	var nodes []cpuset.CPUSet
	for i, s := range strings.Split(os.Getenv("LOCUS_NUMAVM_NODE_CPUS"), ";") {
		set, err := topology.ParseCPUList(s)
		if err != nil {
			t.Fatalf("LOCUS_NUMAVM_NODE_CPUS node %d: %q: %v", i, s, err)
		}
		nodes = append(nodes, set)
	}
	all := cpuset.New().Union(nodes...)
	for _, cpu := range all.List() {
		sib := siblings(t, cpu)
		first := cpu - cpu%threads
		want := cpuset.New()
		for i := range threads {
			want = want.Union(cpuset.New(first + i))
		}
		if !sib.Equals(want) {
			t.Errorf("cpu%d: thread siblings %s, want %s", cpu, sib, want)
		}
		for n, node := range nodes {
			if node.Contains(cpu) && !sib.IsSubsetOf(node) {
				t.Errorf("cpu%d: siblings %s not all in node %d (%s)", cpu, sib, n, node)
			}
		}
	}
}

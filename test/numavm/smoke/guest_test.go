// Package smoke proves the NUMA test guest is what the project's real-kernel
// tests need: several NUMA nodes with the expected CPUs and distances, a
// cgroup hierarchy with cpuset and memory, working memory policy and page
// migration syscalls, and the numactl tools. Outside the guest (no
// LOCUS_NUMAVM=1) the guest-only tests skip: bash test/numavm/run.sh runs them.
package smoke

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// layout is the NUMA shape run.sh gave QEMU, as the guest's environment
// repeats it: LOCUS_NUMAVM_NODE_CPUS="0-1;2-3", LOCUS_NUMAVM_DISTANCES="10,21;21,10".
type layout struct {
	nodeCPUs  []cpuset.CPUSet
	distances [][]int
	cgroup    string
}

func parseLayout(cpus, dists, cgroup string) (layout, error) {
	var l layout
	if cpus == "" || dists == "" {
		return l, fmt.Errorf("LOCUS_NUMAVM_NODE_CPUS=%q and LOCUS_NUMAVM_DISTANCES=%q must both be set", cpus, dists)
	}
	for i, s := range strings.Split(cpus, ";") {
		set, err := topology.ParseCPUList(s)
		if err != nil || set.IsEmpty() {
			return l, fmt.Errorf("LOCUS_NUMAVM_NODE_CPUS node %d: %q is not a CPU list", i, s)
		}
		l.nodeCPUs = append(l.nodeCPUs, set)
	}
	rows := strings.Split(dists, ";")
	if len(rows) != len(l.nodeCPUs) {
		return l, fmt.Errorf("LOCUS_NUMAVM_DISTANCES has %d rows for %d nodes", len(rows), len(l.nodeCPUs))
	}
	for i, r := range rows {
		var row []int
		for _, f := range strings.Split(r, ",") {
			d, err := strconv.Atoi(f)
			if err != nil {
				return l, fmt.Errorf("LOCUS_NUMAVM_DISTANCES row %d: %q is not a number", i, f)
			}
			row = append(row, d)
		}
		if len(row) != len(l.nodeCPUs) {
			return l, fmt.Errorf("LOCUS_NUMAVM_DISTANCES row %d has %d entries for %d nodes", i, len(row), len(l.nodeCPUs))
		}
		l.distances = append(l.distances, row)
	}
	l.cgroup = cgroup
	return l, nil
}

// guest returns the expected layout, skipping outside the guest. Inside it a
// missing or malformed layout fails the test: the guest run is what CI checks.
func guest(t *testing.T) layout {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("runs only inside the NUMA test guest (LOCUS_NUMAVM=1): bash test/numavm/run.sh")
	}
	l, err := parseLayout(os.Getenv("LOCUS_NUMAVM_NODE_CPUS"), os.Getenv("LOCUS_NUMAVM_DISTANCES"),
		os.Getenv("LOCUS_NUMAVM_CGROUP"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.nodeCPUs) < 2 {
		t.Fatalf("guest layout has %d NUMA nodes, the smoke test needs at least 2", len(l.nodeCPUs))
	}
	return l
}

func (l layout) lastNode() int { return len(l.nodeCPUs) - 1 }

func TestParseLayout(t *testing.T) {
	tests := []struct {
		name, cpus, dists string
		wantNodes         int
		wantErr           string
	}{
		{"two nodes", "0-1;2-3", "10,21;21,10", 2, ""},
		{"four nodes", "0;1;2;3", "10,21,31,31;21,10,31,31;31,31,10,21;31,31,21,10", 4, ""},
		{"unset", "", "", 0, "must both be set"},
		{"bad cpu list", "0-1;x", "10,21;21,10", 0, `node 1: "x"`},
		{"row count", "0-1;2-3", "10,21", 0, "1 rows for 2 nodes"},
		{"row width", "0-1;2-3", "10,21;21", 0, "row 1 has 1 entries"},
		{"not a number", "0-1;2-3", "10,21;21,ten", 0, `"ten" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := parseLayout(tt.cpus, tt.dists, "v2")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.nodeCPUs) != tt.wantNodes || len(l.distances) != tt.wantNodes {
				t.Fatalf("got %d nodes, %d distance rows, want %d", len(l.nodeCPUs), len(l.distances), tt.wantNodes)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// unequalHuge is two nodes of four CPUs: node 0 with 16 GiB, node 1 with
// 64 GiB and every huge page (512 of 2 MiB, 4 of 1 GiB).
var unequalHuge = fixture.Shape{Name: "2s-4c-unequal-huge", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 1, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30,
	MemoryByNode: map[int]uint64{1: 64 << 30},
	HugePages: []fixture.NodeHugePages{
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 512}},
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 4, Free: 3}},
	}}

func TestPlanMemory(t *testing.T) {
	sys := planTree(t, unequalHuge)
	for _, tc := range []struct {
		name      string
		args      []string
		numaNodes []int // nil: any one node
		memNodes  []int
		memory    planMemory
	}{
		{"fits either node: the one left with more free", []string{"--memory", "8Gi"}, []int{1}, []int{1}, planMemory{Bytes: 8 << 30}},
		{"held memory leaves the smaller node freer", []string{"--memory", "2Gi", "--memory-held", "1=60Gi"},
			[]int{0}, []int{0}, planMemory{Bytes: 2 << 30}},
		{"only the larger node holds it", []string{"--memory", "32Gi"}, []int{1}, []int{1}, planMemory{Bytes: 32 << 30}},
		{"held memory leaves room on the larger node only", []string{"--memory", "10Gi", "--memory-held", "0=8Gi"},
			[]int{1}, []int{1}, planMemory{Bytes: 10 << 30}},
		{"2Mi pages on the node that has them", []string{"--hugepages-2Mi", "512Mi"}, []int{1}, []int{1},
			planMemory{HugePages2Mi: 512 << 20}},
		{"1Gi pages count the reserved pool, not the free pages", []string{"--hugepages-1Gi", "4Gi"}, []int{1}, []int{1},
			planMemory{HugePages1Gi: 4 << 30}},
		{"spills over both nodes", []string{"--memory", "70Gi"}, nil, []int{0, 1}, planMemory{Bytes: 70 << 30}},
		{"spills once held memory leaves no node room", []string{"--memory", "60Gi", "--memory-held", "1=8Gi"},
			nil, []int{0, 1}, planMemory{Bytes: 60 << 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--sysfs-root", sys, "--cpus", "2", "-o", "json"}, tc.args...)
			out, err := runPlan(t, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var got planJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out)
			}
			if tc.numaNodes != nil && !slices.Equal(got.NUMANodes, tc.numaNodes) || len(got.NUMANodes) != 1 {
				t.Errorf("CPUs on nodes %v, want %v (one node)", got.NUMANodes, tc.numaNodes)
			}
			spilled := !slices.Equal(tc.memNodes, got.NUMANodes)
			if !slices.Equal(got.MemNodes, tc.memNodes) || got.MemorySpilled != spilled {
				t.Errorf("memNodes %v spilled %v, want %v spilled %v", got.MemNodes, got.MemorySpilled, tc.memNodes, spilled)
			}
			if got.Memory == nil || *got.Memory != tc.memory {
				t.Errorf("memory %+v, want %+v", got.Memory, tc.memory)
			}
		})
	}
}

func TestPlanMemoryTable(t *testing.T) {
	sys := planTree(t, unequalHuge)
	out, err := runPlan(t, "--sysfs-root", sys, "--cpus", "2", "--memory", "70Gi", "--hugepages-2Mi", "2Mi")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"\nmems:        0,1 (the memory spilled beyond the CPUs' nodes)\n",
		"\nmemory:      70.0 GiB, 2 MiB huge pages 2.0 MiB\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A request no group of nodes can hold is refused with the allocator's
// reason, which names the short resource.
func TestPlanMemoryRefused(t *testing.T) {
	sys := planTree(t, unequalHuge)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--memory", "81Gi"}, "memory"},
		{[]string{"--memory", "16Gi", "--memory-held", "0=1Gi,1=64Gi"}, "memory"},
		{[]string{"--hugepages-1Gi", "5Gi"}, "1Gi"},
		{[]string{"--hugepages-2Mi", "2Mi", "--hugepages-2Mi-held", "1=1Gi"}, "2Mi"},
	} {
		out, err := runPlan(t, append([]string{"--sysfs-root", sys, "--cpus", "1"}, tc.args...)...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("args %v: error %v (exit %d), want exit 2 naming %q\n%s", tc.args, err, exitCodeOf(err), tc.want, out)
		}
	}
}

func TestPlanMemoryFlagErrors(t *testing.T) {
	sys := planTree(t, unequalHuge)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--memory", "-1Gi"}, "--memory -1Gi is negative"},
		{[]string{"--memory", "1e19"}, "--memory 1e19: more than 1Pi"},
		{[]string{"--memory", "lots"}, `--memory "lots" is not a quantity`},
		{[]string{"--memory", strings.Repeat("9", 100000)}, `--memory "` + strings.Repeat("9", 64) + `…" is not a quantity`},
		{[]string{"--hugepages-2Mi", "3Mi"}, "--hugepages-2Mi 3Mi is not a whole number of 2.0 MiB pages"},
		{[]string{"--hugepages-1Gi", "1.5Gi"}, "--hugepages-1Gi 1.5Gi is not a whole number of 1.0 GiB pages"},
		{[]string{"--hugepages-1Gi", "-1Gi"}, "--hugepages-1Gi -1Gi is negative"},
		{[]string{"--memory-held", "0:5Gi"}, `--memory-held: "0:5Gi" is not NODE=QUANTITY`},
		{[]string{"--memory-held", "7=1Gi"}, "--memory-held: 7 is not a NUMA node of this machine"},
		{[]string{"--memory-held", "0=1Gi,0=1Gi"}, "--memory-held: node 0 named twice"},
		{[]string{"--memory-held", "0=1Gi,1=1Gi,0=1Gi"}, "--memory-held: 3 pairs, but the machine has 2 NUMA nodes"},
		{[]string{"--memory-held", strings.Repeat(",", 1<<20)}, "--memory-held: 1048577 pairs, but the machine has 2 NUMA nodes"},
		{[]string{"--memory-held", "0=17Gi"}, "--memory-held: node 0 holds 17.0 GiB, more than its 16.0 GiB"},
		{[]string{"--memory-held", "0=-1"}, "--memory-held node 0: -1 is negative"},
		{[]string{"--hugepages-2Mi-held", "0=2Mi"}, "--hugepages-2Mi-held: node 0 holds 2.0 MiB, more than its 0 B"},
		{[]string{"--hugepages-1Gi-held", "1=5Gi"}, "--hugepages-1Gi-held: node 1 holds 5.0 GiB, more than its 4.0 GiB"},
	} {
		_, err := runPlan(t, append([]string{"--sysfs-root", sys, "--cpus", "1"}, tc.args...)...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") ||
			len(err.Error()) > fuzzseed.MaxErrorLen {
			t.Errorf("args %.80v: error %.300v (exit %d), want exit 2 and one line with %q", tc.args, err, exitCodeOf(err), tc.want)
		}
	}
}

// FuzzParseNodeQuantities holds the held flags' parser to its bounds: no
// panic, a short error naming the flag, at most one quantity per node.
func FuzzParseNodeQuantities(f *testing.F) {
	for _, s := range []string{"0=48Gi,1=2Gi", "0=1Pi", "1=0", " 0 = 1Gi ", "0=1e19", "0=-1", "=", ","} {
		f.Add(s)
	}
	fuzzseed.Add(f, func(s string) string { return "0=" + s })
	fuzzseed.Add(f, fuzzseed.Same)
	topo := fixture.MustBuild(unequalHuge)
	f.Fuzz(func(t *testing.T, s string) {
		var got map[int]uint64
		var err error
		fuzzseed.Timed(t, "parseNodeQuantities", func() { got, err = parseNodeQuantities("--memory-held", s, topo) })
		fuzzseed.CheckError(t, err, "--memory-held")
		if err == nil && len(got) > len(topo.Nodes) {
			t.Fatalf("%d nodes from a machine of %d", len(got), len(topo.Nodes))
		}
		for node, b := range got {
			if node < 0 || node >= len(topo.Nodes) || b > 1<<50 {
				t.Fatalf("node %d holds %d bytes", node, b)
			}
		}
	})
}

package balancer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"
)

const mi = uint64(1 << 20)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// machine builds n partitions of per CPUs each, partition i on node i, and
// gives every node 16 GiB of which free is free.
func machine(n, per int, free uint64) ([]Partition, map[int]NodeMemory) {
	parts := make([]Partition, n)
	mem := map[int]NodeMemory{}
	for i := range n {
		ids := make([]int, per)
		for k := range ids {
			ids[k] = i*per + k
		}
		parts[i] = Partition{Name: fmt.Sprintf("node%d", i), CPUs: cpuset.New(ids...), Nodes: []int{i}}
		mem[i] = NodeMemory{Total: 16 << 30, Free: free}
	}
	return parts, mem
}

// twoSockets: 4 nodes, 0-1 on one socket, 2-3 on the other.
func twoSockets(a, b int) int {
	switch {
	case a == b:
		return 10
	case a/2 == b/2:
		return 21
	}
	return 31
}

func group(name string, cpu float64, memByNode ...uint64) Group {
	g := Group{Name: name, CPU: cpu, Mem: map[int]uint64{}}
	for n, b := range memByNode {
		if b > 0 {
			g.Mem[n] = b
		}
	}
	return g
}

// placements maps group to its partitions, "a" -> "node0,node1".
func placements(d Plan) map[string]string {
	out := map[string]string{}
	for _, p := range d.Placements {
		out[p.Group] = strings.Join(p.Partitions, ",")
	}
	return out
}

func mustEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// oneWindow is the default configuration placing groups after their first
// window, for tests of a single decision.
func oneWindow() Config {
	c := DefaultConfig()
	c.MinWindows = 1
	return c
}

package core

import (
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// A node where a pod would get only threads beside other pods' must not win
// over one where it gets cores of its own just because it is fuller: with
// most-allocated scoring, the fullest node is the one whose whole cores are
// gone, and pods of 1-16 CPUs landed on its left-over threads while other
// nodes had whole cores free (20 of 50 cpuset pods sharing a core in the
// scale benchmark's quick run).
func TestNoSharedCoreWhereOneIsFree(t *testing.T) {
	c := NewCluster()
	for _, node := range []string{"packed", "busy", "empty"} {
		c.SetNRT(node, publish(t, twoNode, node, reservedCore, nil))
	}
	hold := func(key, node string, cpus ...int) {
		c.SetPod(key, node, &workload.Assignment{CPUs: cpuset.New(cpus...), Policy: cpualloc.FullPCPUsThenThreads})
	}
	// packed: node 1 full, node 0 has threads 10 and 11 left, each beside a
	// thread another pod holds (2 and 3).
	hold("ns/a", "packed", 1, 9, 2, 3)
	hold("ns/b", "packed", 4, 5, 6, 7, 12, 13, 14, 15)
	// busy: node 1 full with whole cores, node 0 free.
	hold("ns/c", "busy", 4, 5, 6, 7, 12, 13, 14, 15)
	snap := c.Snapshot()
	for _, tc := range []struct {
		name string
		req  Request
		best string
	}{
		{"2 CPUs, most-allocated", req(2, "", 2000), "busy"},
		{"1 CPU, most-allocated", req(1, "", 1000), "busy"},
		{"2 CPUs, full-pcpus", req(2, cpualloc.FullPCPUs, 2000), "busy"},
		// Spread takes left-over threads on purpose (whole cores stay whole
		// for full-pcpus pods): the strategy alone chooses.
		{"2 CPUs, spread", req(2, cpualloc.SpreadByPCPUs, 2000), "packed"},
	} {
		score := map[string]int64{}
		for _, node := range []string{"packed", "busy", "empty"} {
			p, err := Place(snap.Get(node), 16, tc.req)
			if err != nil {
				if node == "packed" && tc.req.Policy == cpualloc.FullPCPUs {
					continue // no whole core left there
				}
				t.Fatalf("%s on %s: %v", tc.name, node, err)
			}
			if p.Score < 0 || p.Score > MaxScore {
				t.Fatalf("%s on %s: score %d outside [0, %d]", tc.name, node, p.Score, MaxScore)
			}
			score[node] = p.Score
		}
		best := ""
		for node, s := range score {
			if best == "" || s > score[best] {
				best = node
			}
		}
		if best != tc.best {
			t.Errorf("%s: scores %v, best %s, want %s", tc.name, score, best, tc.best)
		}
	}
}

func TestSharesACore(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n", publish(t, twoNode, "n", reservedCore, nil))
	c.SetPod("ns/a", "n", &workload.Assignment{CPUs: cpuset.New(1, 9, 2), Policy: cpualloc.FullPCPUsThenThreads})
	c.SetPod("ns/b", "n", &workload.Assignment{CPUs: cpuset.New(5), Policy: cpualloc.StaticBurst, RequestMilli: 500})
	v := c.Snapshot().Get("n")
	for _, tc := range []struct {
		cpus cpuset.CPUSet
		want bool
	}{
		{cpuset.New(3, 11), false},    // a whole free core
		{cpuset.New(3), false},        // one thread, its sibling free
		{cpuset.New(10), true},        // beside a's 2
		{cpuset.New(13), true},        // beside b's static-burst 5
		{cpuset.New(8), true},         // beside the reserved 0
		{cpuset.New(4, 12, 6), false}, // its own threads only
		{cpuset.New(3, 11, 10), true}, // one of them beside a's
		{cpuset.New(), false},         // nothing
		{cpuset.New(7, 15, 6, 14), false},
	} {
		if got := v.sharesACore(tc.cpus.UnsortedList()); got != tc.want {
			t.Errorf("%s: shares a core %t, want %t", tc.cpus, got, tc.want)
		}
	}
}

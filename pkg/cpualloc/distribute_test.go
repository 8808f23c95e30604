package cpualloc

import (
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// cpusPerNode counts the CPUs of set on each NUMA node.
func cpusPerNode(topo *topology.Topology, set cpuset.CPUSet) map[int]int {
	out := map[int]int{}
	for _, id := range set.List() {
		c, _ := topo.CPU(id)
		out[c.NUMA]++
	}
	return out
}

// Two nodes of 16 two-thread cores (CPU c and c+32 are core c's threads):
// a split in whole cores that one node cannot hold moves a CPU over, so
// the shares stay within a core of each other, as kubelet's
// distribute-cpus-across-numa splits them: 40 CPUs over nodes with 25 and
// 19 free are 21 + 19, not refused.
func TestDistributeSplitsWithinACoreWhenCoresDoNotFit(t *testing.T) {
	topo := machineOf(t, 32, 2, func(c int) (int, int, int) { return c / 16, c / 16, c / 16 })
	res, err := Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "0-6,16-28"))}, cpuset.New(),
		Request{CPUs: 40, Policy: DistributeAcrossNUMA})
	if err != nil {
		t.Fatal(err)
	}
	perNode := cpusPerNode(topo, res.CPUs)
	if perNode[0] != 21 || perNode[1] != 19 {
		t.Fatalf("cpus %s: %v per node, want 21 on node 0 and 19 on node 1", res.CPUs, perNode)
	}
	// When a split in whole cores fits, it is the one taken.
	res, err = Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "0-6,16-26"))}, cpuset.New(),
		Request{CPUs: 40, Policy: DistributeAcrossNUMA})
	if err != nil {
		t.Fatal(err)
	}
	perNode = cpusPerNode(topo, res.CPUs)
	if perNode[0] != 20 || perNode[1] != 20 {
		t.Fatalf("cpus %s: %v per node, want 20 and 20", res.CPUs, perNode)
	}
	// More than a core apart is no even split: refused.
	if _, err := Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "0-6,16-30"))}, cpuset.New(),
		Request{CPUs: 40, Policy: DistributeAcrossNUMA}); err == nil {
		t.Fatal("40 CPUs over nodes with 25 and 17 free: want a refusal")
	}
}

// Two nodes of 8 two-thread cores (CPU c and c+16 are core c's threads).
// Node 0 has every core in part; node 1 has two whole cores. Neither has
// the three whole cores 6 CPUs would take, so both hold left-overs beside
// other workloads; node 1's whole cores leave 2 of them, not 6, though node
// 0 is the fuller.
func TestDistributeTakesTheNodeShortOfFewestWholeCores(t *testing.T) {
	topo := machineOf(t, 16, 2, func(c int) (int, int, int) { return c / 8, c / 8, c / 8 })
	res, err := Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "0-7,8-13"))}, cpuset.New(),
		Request{CPUs: 6, Policy: DistributeAcrossNUMA})
	if err != nil {
		t.Fatal(err)
	}
	if whole := mustParse(t, "14-15,30-31"); !whole.IsSubsetOf(res.CPUs) || !res.CPUs.IsSubsetOf(mustParse(t, "8-15,24-31")) {
		t.Fatalf("cpus = %s, want node 1's whole cores 14-15,30-31 and two left-overs beside them", res.CPUs)
	}
}

// A split within a core of even over fewer sockets and nodes beats a split
// in whole cores over more, as kubelet's fewest-nodes rule has it. Four
// nodes of 4 two-thread cores, two a socket (CPU c and c+16 are core c's
// threads), with 7, 5, 4 and 4 CPUs free: 12 CPUs are 7 + 5 on socket 0,
// not 4 + 4 + 4 over both sockets.
func TestDistributePrefersFewerNodesToWholeCoreShares(t *testing.T) {
	topo := machineOf(t, 16, 2, func(c int) (int, int, int) { return c / 8, c / 4, c / 4 })
	res, err := Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "0,4-6,8-15"))}, cpuset.New(),
		Request{CPUs: 12, Policy: DistributeAcrossNUMA})
	if err != nil {
		t.Fatal(err)
	}
	perNode := cpusPerNode(topo, res.CPUs)
	if perNode[0] != 7 || perNode[1] != 5 || len(perNode) != 2 {
		t.Fatalf("cpus %s: %v per node, want 7 on node 0 and 5 on node 1", res.CPUs, perNode)
	}
}

// A share's part below one core stays in the L3 groups its whole cores
// are in: an L3 group more costs more than a core broken there. One node,
// four L3 groups of 4 two-thread cores (CPU c and c+16 are core c's
// threads): group 0 whole, group 1 two whole cores, group 2 one left-over
// thread (8), group 3 full. 11 CPUs take groups 0 and 1, breaking a core of
// group 1, not a third group for the left-over.
func TestDistributeRemainderStaysInItsL3Groups(t *testing.T) {
	topo := machineOf(t, 16, 2, func(c int) (int, int, int) { return 0, 0, c / 4 })
	res, err := Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "6-7,22-23,24,9-15,25-31"))}, cpuset.New(),
		Request{CPUs: 11, Policy: DistributeAcrossNUMA})
	if err != nil {
		t.Fatal(err)
	}
	if !res.CPUs.IsSubsetOf(mustParse(t, "0-5,16-21")) {
		t.Fatalf("cpus = %s, want 11 of groups 0 and 1 (0-5,16-21)", res.CPUs)
	}
}

// A node whose whole cores cannot cover a share is ranked by the L3 groups
// its fill will span, which then takes left-overs: counted by whole cores
// alone, node 0 (one L3 group of whole cores, left-overs in three others)
// looked like one group and took three. Two nodes of 4 L3 groups of 2
// two-thread cores (CPU c and c+16 are core c's threads).
func TestDistributeRanksNodesByTheGroupsTheirFillSpans(t *testing.T) {
	topo := machineOf(t, 16, 2, func(c int) (int, int, int) { return c / 8, c / 8, c / 2 })
	res, err := Allocate(topo, State{Exclusive: BitsOf(mustParse(t, "2-7,18,20,22,9,11-15,28-31"))}, cpuset.New(),
		Request{CPUs: 6, Policy: DistributeAcrossNUMA})
	if err != nil {
		t.Fatal(err)
	}
	if want := mustParse(t, "8,10,24-27"); !res.CPUs.Equals(want) {
		t.Fatalf("cpus = %s, want node 1's %s (2 L3 groups, not node 0's 3)", res.CPUs, want)
	}
}

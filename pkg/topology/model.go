// Package topology models the CPU and memory layout of one machine: logical CPUs,
// physical cores, L3 caches, NUMA nodes, sockets and the distances between nodes.
//
// The model is plain data. Discovery from sysfs lives in discover.go; everything
// else in Locus (allocator, agent, balancer) takes a *Topology and never reads
// the host itself.
package topology

import (
	"fmt"
	"sort"

	"k8s.io/utils/cpuset"
)

// CPU is one online logical CPU (hardware thread). Core, L3 and NUMA ids are
// unique machine-wide, so two sockets never share a core id.
type CPU struct {
	ID     int `json:"id"`
	Core   int `json:"core"`
	Socket int `json:"socket"`
	Die    int `json:"die"`
	NUMA   int `json:"numa"`
	// L3 is the machine-wide id of the last-level cache this CPU shares,
	// or -1 when the machine reports no L3.
	L3 int `json:"l3"`
}

// NUMANode is one memory node. A node with an empty CPU set is memory-only
// (for example CXL or persistent memory exposed as a NUMA node).
type NUMANode struct {
	ID          int
	CPUs        cpuset.CPUSet
	MemoryTotal uint64
	MemoryFree  uint64
	// HugePages are the node's huge page pools, sorted by size; none when
	// the kernel reserves none or has no hugetlbfs.
	HugePages []HugePages
	// Distances holds the SLIT distance to every node, in the order of
	// Topology.Nodes (as `numactl -H` prints them).
	Distances []int
}

// Topology is the machine. CPUs is sorted by ID and holds online CPUs only;
// Nodes is sorted by ID.
type Topology struct {
	CPUs     []CPU
	Nodes    []NUMANode
	Isolated cpuset.CPUSet
	// Devices are the machine's PCI functions, sorted by Address; empty
	// when sysfs has no PCI bus (or discovery was not asked for them).
	Devices []PCIDevice
}

// CPUSet returns every online CPU.
func (t *Topology) CPUSet() cpuset.CPUSet {
	ids := make([]int, len(t.CPUs))
	for i, c := range t.CPUs {
		ids[i] = c.ID
	}
	return cpuset.New(ids...)
}

// CPU returns the CPU with the given id.
func (t *Topology) CPU(id int) (CPU, bool) {
	i := sort.Search(len(t.CPUs), func(i int) bool { return t.CPUs[i].ID >= id })
	if i < len(t.CPUs) && t.CPUs[i].ID == id {
		return t.CPUs[i], true
	}
	return CPU{}, false
}

// Node returns the NUMA node with the given id.
func (t *Topology) Node(id int) (NUMANode, bool) {
	i := t.nodeIndex(id)
	if i < 0 {
		return NUMANode{}, false
	}
	return t.Nodes[i], true
}

func (t *Topology) nodeIndex(id int) int {
	i := sort.Search(len(t.Nodes), func(i int) bool { return t.Nodes[i].ID >= id })
	if i < len(t.Nodes) && t.Nodes[i].ID == id {
		return i
	}
	return -1
}

// Distance is the SLIT distance from node a to node b, or -1 when unknown.
func (t *Topology) Distance(a, b int) int {
	ia, ib := t.nodeIndex(a), t.nodeIndex(b)
	if ia < 0 || ib < 0 || ib >= len(t.Nodes[ia].Distances) {
		return -1
	}
	return t.Nodes[ia].Distances[ib]
}

// NodesOf returns the sorted NUMA node ids that the given CPUs belong to.
func (t *Topology) NodesOf(cpus cpuset.CPUSet) []int {
	seen := map[int]bool{}
	var out []int
	for _, id := range cpus.UnsortedList() {
		if c, ok := t.CPU(id); ok && !seen[c.NUMA] {
			seen[c.NUMA] = true
			out = append(out, c.NUMA)
		}
	}
	sort.Ints(out)
	return out
}

// CPUsWhere returns the CPUs for which keep returns true.
func (t *Topology) CPUsWhere(keep func(CPU) bool) cpuset.CPUSet {
	var ids []int
	for _, c := range t.CPUs {
		if keep(c) {
			ids = append(ids, c.ID)
		}
	}
	return cpuset.New(ids...)
}

// Validate checks the invariants every consumer relies on: sorted unique CPU and
// node ids, CPUs that name existing nodes, node CPU sets that match the CPUs,
// a square distance matrix, and devices with canonical sorted addresses on
// existing nodes.
func (t *Topology) Validate() error {
	if len(t.CPUs) == 0 {
		return fmt.Errorf("topology has no online CPUs")
	}
	if err := t.checkBounds(); err != nil {
		return err
	}
	for i := 1; i < len(t.CPUs); i++ {
		if t.CPUs[i].ID <= t.CPUs[i-1].ID {
			return fmt.Errorf("cpus not sorted or duplicated at cpu %d", t.CPUs[i].ID)
		}
	}
	for i := 1; i < len(t.Nodes); i++ {
		if t.Nodes[i].ID <= t.Nodes[i-1].ID {
			return fmt.Errorf("numa nodes not sorted or duplicated at node %d", t.Nodes[i].ID)
		}
	}
	for _, c := range t.CPUs {
		i := t.nodeIndex(c.NUMA)
		if i < 0 {
			return fmt.Errorf("cpu %d names unknown numa node %d", c.ID, c.NUMA)
		}
		if !t.Nodes[i].CPUs.Contains(c.ID) {
			return fmt.Errorf("numa node %d does not list its cpu %d", c.NUMA, c.ID)
		}
	}
	if err := t.checkDevices(); err != nil {
		return err
	}
	for _, n := range t.Nodes {
		if err := checkHugePages(n); err != nil {
			return err
		}
		if len(n.Distances) != len(t.Nodes) {
			return fmt.Errorf("numa node %d has %d distances, want %d", n.ID, len(n.Distances), len(t.Nodes))
		}
		for _, id := range n.CPUs.UnsortedList() {
			if c, ok := t.CPU(id); !ok || c.NUMA != n.ID {
				return fmt.Errorf("numa node %d lists cpu %d that is offline or on another node", n.ID, id)
			}
		}
	}
	return nil
}

// checkBounds keeps every id within what Linux can number, so that a
// topology read from outside (a NodeResourceTopology object) cannot make the
// allocator size its tables by a hostile id.
func (t *Topology) checkBounds() error {
	if len(t.CPUs) > MaxCPUID+1 || len(t.Nodes) > MaxNodeID+1 {
		return fmt.Errorf("%d cpus and %d numa nodes: more than Linux can number (%d, %d)", len(t.CPUs), len(t.Nodes), MaxCPUID+1, MaxNodeID+1)
	}
	in := func(v, lo, hi int) bool { return v >= lo && v <= hi }
	for _, c := range t.CPUs {
		if !in(c.ID, 0, MaxCPUID) || !in(c.Core, 0, MaxCPUID) || !in(c.Socket, 0, MaxCPUID) || !in(c.Die, 0, MaxCPUID) ||
			!in(c.NUMA, 0, MaxNodeID) || !in(c.L3, -1, MaxCPUID) {
			return fmt.Errorf("cpu %d: an id out of range (id, core, socket, die, l3 0-%d; numa 0-%d): %+v", c.ID, MaxCPUID, MaxNodeID, c)
		}
	}
	for _, n := range t.Nodes {
		if !in(n.ID, 0, MaxNodeID) {
			return fmt.Errorf("numa node %d: id out of range 0-%d", n.ID, MaxNodeID)
		}
	}
	return nil
}

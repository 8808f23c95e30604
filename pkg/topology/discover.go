package topology

import (
	"fmt"
	"path/filepath"
)

// Discover reads the topology of the machine whose sysfs is mounted at
// sysfsRoot ("/sys" on a live host; a directory written by fixture.WriteSysfs
// in tests).
//
// It reads devices/system/cpu (online CPUs, their package, die, core and L3
// cache, the isolated list) and devices/system/node (online nodes, their CPUs,
// memory and distances), then the PCI functions under bus/pci/devices
// (ScanPCI). Offline CPUs are left out. Core, die and L3 ids are
// renumbered machine-wide in order of each group's lowest online CPU, so ids
// are stable for a given layout and never repeat across sockets.
//
// A kernel built without NUMA support has no node directory; the machine is
// then one node 0 holding every CPU at distance 10, with memory reported as 0
// because the only other source, /proc/meminfo, lies outside the sysfs tree.
func Discover(sysfsRoot string) (*Topology, error) {
	t, _, err := DiscoverScan(sysfsRoot)
	return t, err
}

// DiscoverScan is Discover with what the PCI scan skipped (PCIScan), for a
// caller that reports it: the tree is read once.
func DiscoverScan(sysfsRoot string) (*Topology, PCIScan, error) {
	t, err := discoverMachine(sysfsRoot)
	if err != nil {
		return nil, PCIScan{}, err
	}
	pci, err := ScanPCI(sysfsRoot, t)
	if err != nil {
		return nil, PCIScan{}, err
	}
	t.Devices = pci.Devices
	return t, pci, nil
}

// discoverMachine reads the CPUs and nodes of the tree, devices aside.
func discoverMachine(sysfsRoot string) (*Topology, error) {
	cpuDir := filepath.Join(sysfsRoot, "devices", "system", "cpu")
	onlinePath := filepath.Join(cpuDir, "online")
	online, err := readList(onlinePath)
	if err != nil {
		return nil, err
	}
	if online.IsEmpty() {
		return nil, fmt.Errorf("%s: no online cpus", onlinePath)
	}
	// isolated is absent on old kernels and empty when nothing is isolated.
	isolated, _, err := readOptionalList(filepath.Join(cpuDir, "isolated"))
	if err != nil {
		return nil, err
	}
	cpus, err := discoverCPUs(cpuDir, online)
	if err != nil {
		return nil, err
	}
	nodeDir := filepath.Join(sysfsRoot, "devices", "system", "node")
	nodes, err := discoverNodes(nodeDir, online)
	if err != nil {
		return nil, err
	}
	if err := assignNodes(cpus, nodes, nodeDir); err != nil {
		return nil, err
	}
	t := &Topology{CPUs: cpus, Nodes: nodes, Isolated: isolated}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("sysfs tree %s: %w", sysfsRoot, err)
	}
	return t, nil
}

// assignNodes sets each CPU's NUMA id from the node CPU lists, which are the
// kernel's authority on CPU-to-node placement.
func assignNodes(cpus []CPU, nodes []NUMANode, nodeDir string) error {
	index := make(map[int]int, len(cpus))
	for i, c := range cpus {
		index[c.ID] = i
		cpus[i].NUMA = -1
	}
	for _, n := range nodes {
		for _, id := range n.CPUs.UnsortedList() {
			i := index[id] // node CPU lists were already cut down to online CPUs
			if prev := cpus[i].NUMA; prev >= 0 {
				return fmt.Errorf("%s: cpu %d is listed by node %d and node %d", nodeDir, id, prev, n.ID)
			}
			cpus[i].NUMA = n.ID
		}
	}
	for _, c := range cpus {
		if c.NUMA < 0 {
			return fmt.Errorf("%s: online cpu %d is listed by no node", nodeDir, c.ID)
		}
	}
	return nil
}

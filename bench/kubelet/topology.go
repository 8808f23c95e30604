package kubelet

import (
	cputopo "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"

	"github.com/locus-project/locus/pkg/topology"
)

// CPUTopology is the CPU manager's view of t, as kubelet's discovery would
// build it from cAdvisor: one entry per online CPU with its core, socket, NUMA
// node and last-level cache. A machine without L3 gets one cache per socket,
// as cAdvisor reports then.
func CPUTopology(t *topology.Topology) *cputopo.CPUTopology {
	details := cputopo.CPUDetails{}
	cores, sockets, nodes, caches := map[int]bool{}, map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, c := range t.CPUs {
		l3 := c.L3
		if l3 < 0 {
			l3 = c.Socket
		}
		details[c.ID] = cputopo.CPUInfo{NUMANodeID: c.NUMA, SocketID: c.Socket, CoreID: c.Core, UncoreCacheID: l3}
		cores[c.Core], sockets[c.Socket], nodes[c.NUMA], caches[l3] = true, true, true, true
	}
	return &cputopo.CPUTopology{
		NumCPUs:        len(t.CPUs),
		NumCores:       len(cores),
		NumUncoreCache: len(caches),
		NumSockets:     len(sockets),
		NumNUMANodes:   len(nodes),
		CPUDetails:     details,
	}
}

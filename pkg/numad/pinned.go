package numad

import (
	"fmt"
	"math/bits"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
)

// Pinned is what the running agent holds for its workloads: the CPUs no
// one else may run on, and the memory their requests hold on each node.
type Pinned struct {
	CPUs   cpuset.CPUSet
	Memory map[int]uint64 // bytes by NUMA node
}

// MaxStatusWorkloads bounds the workloads read from the agent's status; the
// file itself is bounded by status.MaxFileBytes.
const MaxStatusWorkloads = 100000

// PinnedOf reads what the agent's status says it holds: the exclusive pool
// (every workload with CPUs of its own) and the CPUs the kubelet's static
// CPU manager holds alone, and each workload's memory by node. Huge pages
// are left out: they come from the pools reserved apart, never from the
// free memory a VM is advised on.
func PinnedOf(st status.Status) (Pinned, error) {
	p := Pinned{CPUs: cpuset.New(), Memory: map[int]uint64{}}
	for _, l := range []struct{ field, list string }{
		{"exclusivePool", st.Node.Exclusive}, {"kubeletCPUs", st.Node.KubeletCPUs},
	} {
		if l.list == "" {
			continue
		}
		s, err := topology.ParseCPUList(l.list)
		if err != nil {
			return Pinned{}, fmt.Errorf("the agent's status: node.%s: %w", l.field, err)
		}
		p.CPUs = p.CPUs.Union(s)
	}
	if len(st.Workloads) > MaxStatusWorkloads {
		return Pinned{}, fmt.Errorf("the agent's status: %d workloads, more than %d", len(st.Workloads), MaxStatusWorkloads)
	}
	for _, w := range st.Workloads {
		for _, m := range w.MemoryByNode {
			if m.Node < 0 || m.Node > topology.MaxCPUID {
				return Pinned{}, fmt.Errorf("the agent's status: workload %s: memoryByNode node %d out of range", topology.Quote(w.Name), m.Node)
			}
			sum, carry := bits.Add64(p.Memory[m.Node], m.Bytes, 0)
			if carry != 0 {
				sum = ^uint64(0) // more than any node has: the node is full
			}
			p.Memory[m.Node] = sum
		}
	}
	return p, nil
}

// Pool is the CPUs a new VM may be advised onto: every CPU the machine has
// less those isolated from the scheduler and those pinned.
func Pool(topo *topology.Topology, p Pinned) cpuset.CPUSet {
	return topo.CPUSet().Difference(topo.Isolated).Difference(p.CPUs)
}

// Available is each node's memory as a new VM may have it: what is free
// now, and no more than the node's total less what pinned workloads hold,
// since memory they hold but have not touched yet is free only until they
// do.
func Available(mem map[int]balancer.NodeMemory, held map[int]uint64) map[int]balancer.NodeMemory {
	out := make(map[int]balancer.NodeMemory, len(mem))
	for n, m := range mem {
		var room uint64
		if held[n] < m.Total {
			room = m.Total - held[n]
		}
		m.Free = min(m.Free, room)
		out[n] = m
	}
	return out
}

// Answer is the node list numad prints for the advice: the advised nodes,
// or, when nothing fits (or every CPU is pinned), every node with memory,
// as numad answers then, so that libvirt still starts the domain.
func Answer(adv balancer.Advice, nodes []int) string {
	if adv.Fits && len(adv.Nodes) > 0 {
		return cpuset.New(adv.Nodes...).String()
	}
	return cpuset.New(nodes...).String()
}

package core

import (
	"slices"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// siblingsOf maps each CPU of topo to the CPUs of its core (itself
// included), so that a placement can tell whose threads it sits beside.
func siblingsOf(topo *topology.Topology) map[int][]int {
	byCore := map[int][]int{}
	for _, c := range topo.CPUs {
		byCore[c.Core] = append(byCore[c.Core], c.ID)
	}
	out := make(map[int][]int, len(topo.CPUs))
	for _, c := range topo.CPUs {
		out[c.ID] = byCore[c.Core]
	}
	return out
}

// sharesACore says whether cpus, placed on v, put a thread beside one that
// another pod holds (alone, or as static-burst load) or the node reserves:
// two workloads then share a core's execution units and caches.
func (v *NodeView) sharesACore(cpus []int) bool {
	for _, id := range cpus {
		for _, s := range v.machine.siblings[id] {
			if s == id || slices.Contains(cpus, s) {
				continue
			}
			if (s>>6 < len(v.bits) && v.bits[s>>6]&(1<<(s&63)) != 0) || v.burst[s] > 0 || v.Reserved.Contains(s) {
				return true
			}
		}
	}
	return false
}

// wantsOwnCores says whether a placement for req that shares a core with
// another workload is worse than one that does not. Spread-by-pcpus takes
// left-over threads beside other workloads on purpose (whole cores stay
// whole for the pods that need them), and static-burst shares its CPUs by
// design; every other policy asks for whole cores first.
func wantsOwnCores(req Request) bool {
	return req.Policy != cpualloc.SpreadByPCPUs && req.Policy != cpualloc.StaticBurst
}

// placementScore ranks p: locality first (one L3 above one NUMA node above
// several), then, for a policy that wants cores of its own, a placement
// sharing no core above one that shares, then the scoring strategy. Without
// the middle tier, most-allocated scoring sends a pod to the fullest node,
// which is the one whose whole cores are gone: its CPUs would be left-over
// threads beside other pods' while other nodes have whole cores free.
func (v *NodeView) placementScore(req Request, p Placement) int64 {
	own := int64(1)
	if p.SharesCore && wantsOwnCores(req) {
		own = 0
	}
	return movesBand + int64(p.Locality)*2000 + own*1000 + v.strategyScore(req, cpuCount(p.Result))
}

// strategyScore is in [0, 1000]: the share of the node's allocatable CPU
// left free after the placement of cpus CPUs (LeastAllocated), or taken
// (MostAllocated).
func (v *NodeView) strategyScore(req Request, cpus int) int64 {
	if v.allocMilli <= 0 {
		return 0
	}
	used := int64(cpus) * req.shareMilli()
	free := min(max(v.freeMilli-used, 0), v.allocMilli)
	s := free * 1000 / v.allocMilli
	if req.Scoring == LeastAllocated {
		return s
	}
	return 1000 - s
}

package core

import (
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// readMovable reads every zone's count of CPUs held by pods that may move
// (nrt.AttributeMovableCPUs), by NUMA node id: nil when no zone has any. A
// count above the zone's CPUs in the annotation is refused, naming the zone.
// The lists were bounded (checkSizes) before this walks them.
func readMovable(ct nrt.CPUTopology, zones []nrt.Zone) (map[int]int, error) {
	cpus := map[int]int{}
	for _, c := range ct.CPUs {
		cpus[c.NUMA]++
	}
	var out map[int]int
	for _, z := range zones {
		id, ok := zoneID(z)
		if !ok {
			continue
		}
		n, err := nrt.ReadMovableCPUs(z, cpus[id])
		if err != nil {
			return nil, err
		}
		if n > 0 {
			if out == nil {
				out = map[int]int{}
			}
			out[id] = n
		}
	}
	return out, nil
}

// movesScore is the score of a placement that needs moves: below every
// placement without them (those start at movesBand), so a node where the
// pod fits as it is always wins, and between such nodes the scoring
// strategy still chooses.
func movesScore(strategy int64) int64 { return strategy * (movesBand - 1) / 1000 }

// movesBand is where the scores of placements without moves start.
const movesBand = 1000

// afterMoves is where req fits on one NUMA node of the view once the
// agent moves pods that may move off it: a result naming that node (and
// its memory there, when memory is counted) and no CPUs; false for
// nowhere. It counts
// CPUs, as the report allows (it says how many CPUs of each zone movable
// pods hold, not which pods nor their shapes): on a NUMA node, the CPUs
// free there plus those movable pods hold there, as far as the other nodes
// have free CPUs to take them, must cover the request. The agent plans the
// actual moves (pkg/moveplan) and may find none (whole cores, say), so the
// scheduler leaves the CPUs to it: the placement names the node, no CPUs.
// Among the nodes that fit, the one with the most CPUs free already needs
// the fewest moves.
func (v *NodeView) afterMoves(req Request) (cpualloc.Result, bool) {
	if len(v.movable) == 0 || req.Policy == cpualloc.StaticBurst || req.CPUs <= 0 {
		return cpualloc.Result{}, false
	}
	topo := v.machine.topo
	held := cpualloc.BitsOfWords(v.bits)
	usable := func(id int) bool {
		return !v.Reserved.Contains(id) && !topo.Isolated.Contains(id) && !held.Contains(id) && v.burst[id] == 0
	}
	freeOn := map[int]int{}
	heldOn := map[int]int{}
	total := 0
	for _, c := range topo.CPUs {
		switch {
		case usable(c.ID):
			freeOn[c.NUMA]++
			total++
		case held.Contains(c.ID) && !v.Reserved.Contains(c.ID):
			heldOn[c.NUMA]++
		}
	}
	best, bestFree := -1, -1
	for _, n := range topo.Nodes {
		// With nothing to move, the allocator's refusal stands: the free
		// CPUs there are enough in number but not in shape (whole cores).
		gain := min(v.movable[n.ID], heldOn[n.ID], total-freeOn[n.ID])
		if gain <= 0 || freeOn[n.ID]+gain < req.CPUs || freeOn[n.ID] <= bestFree {
			continue
		}
		if v.countsMemory(req) {
			if kind, _, _ := shortOf(map[int]cpualloc.Memory{n.ID: v.free[n.ID]}, req.Memory); kind != "" {
				continue
			}
		}
		best, bestFree = n.ID, freeOn[n.ID]
	}
	if best < 0 {
		return cpualloc.Result{}, false
	}
	res := cpualloc.Result{NUMANodes: []int{best}, Policy: req.Policy}
	if v.countsMemory(req) {
		res.MemNodes = []int{best}
	}
	return res, true
}

// moreMovable says whether some NUMA node has more movable CPUs in after
// than in before: a pod refused before may fit after moves now.
func moreMovable(before, after map[int]int) bool {
	for id, n := range after {
		if n > before[id] {
			return true
		}
	}
	return false
}

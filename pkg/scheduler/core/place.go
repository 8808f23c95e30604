package core

import (
	"errors"
	"fmt"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// Scoring chooses between nodes where a pod fits equally well.
type Scoring string

const (
	// MostAllocated packs: prefer the node with the least free CPU left.
	MostAllocated Scoring = "MostAllocated"
	// LeastAllocated spreads: prefer the node with the most free CPU left.
	LeastAllocated Scoring = "LeastAllocated"
)

// Request is what a pod asks for, with the cluster's strategies.
type Request struct {
	workload.CPURequest
	// NUMAStrategy picks CPUs inside a node (the allocator's; "" is
	// most-allocated, as on the agent).
	NUMAStrategy cpualloc.NUMAStrategy
	// Scoring ranks nodes ("" is MostAllocated).
	Scoring Scoring
	// Memory is the pod's memory and huge pages, which the NUMA nodes of
	// its cpuset.mems must hold; zero places the CPUs alone, as before
	// memory was counted.
	Memory cpualloc.Memory
	// Devices, when not empty, are the devices the pod holds: its CPUs are
	// placed on their NUMA nodes where they fit, and a node where they
	// cannot be (or where the devices' nodes are not known) scores as a
	// placement spanning NUMA nodes. Such a request is placed anew on every
	// view, never remembered.
	Devices *Devices
}

// shareMilli is what the pod takes of each of its CPUs.
func (r Request) shareMilli() int64 {
	if r.Policy != cpualloc.StaticBurst {
		return 1000
	}
	m := r.RequestMilli
	if m == 0 {
		m = int64(r.CPUs) * 1000
	}
	return cpualloc.BurstShare(m, r.CPUs)
}

func (r Request) alloc() cpualloc.Request {
	return cpualloc.Request{CPUs: r.CPUs, Policy: r.Policy, RequestMilli: r.RequestMilli, NUMAStrategy: r.NUMAStrategy, Memory: r.Memory}
}

// Kind says why a pod does not fit a node.
type Kind int

const (
	// NoTopology: the node has no NodeResourceTopology.
	NoTopology Kind = iota
	// BadTopology: its NodeResourceTopology cannot be read.
	BadTopology
	// Stale: its NodeResourceTopology describes another machine.
	Stale
	// Silent: its agent stopped rewriting its NodeResourceTopology (see
	// Fresh), so nothing would apply the CPUs chosen there.
	Silent
	// Invalid: the request can never be served on this node (full-pcpus
	// with a count that is not whole cores, say).
	Invalid
	// Insufficient: not enough free CPUs now.
	Insufficient
)

// Unfit says why a pod's CPUs cannot be placed on a node. Detail is the
// node-specific explanation (for logs); Reason a node-independent one, so
// that the framework's "0/N nodes are available" message adds nodes up.
type Unfit struct {
	Kind   Kind
	Detail string
	// Short names what an Insufficient node lacks where the pod asks for
	// memory: "memory", "hugepages-2Mi", "hugepages-1Gi", or "memory and
	// huge pages together"; "" when it is CPUs.
	Short string
}

func (u *Unfit) Error() string { return u.Detail }

// Reason is the node-independent explanation for the pod's condition.
func (u *Unfit) Reason(req Request) string {
	switch u.Kind {
	case NoTopology:
		return "node(s) had no NodeResourceTopology from the locus agent"
	case BadTopology:
		return "node(s) had a NodeResourceTopology that cannot be read"
	case Stale:
		return "node(s) had a stale NodeResourceTopology (its CPUs are not the node's)"
	case Silent:
		return "node(s) whose locus agent stopped reporting (NodeResourceTopology heartbeat older than nrtMaxAge)"
	case Invalid:
		return "node(s) cannot serve the pod's CPU request: " + u.Detail
	}
	if u.Short != "" {
		return memoryReason(u.Short, req)
	}
	if req.Policy == cpualloc.StaticBurst {
		return fmt.Sprintf("node(s) had not enough CPUs with room for static-burst (%d CPUs, request %dm)", req.CPUs, req.RequestMilli)
	}
	return fmt.Sprintf("node(s) had not enough free CPUs for %d exclusive CPUs (%s)", req.CPUs, req.Policy)
}

func unfit(k Kind, format string, args ...any) *Unfit {
	return &Unfit{Kind: k, Detail: fmt.Sprintf(format, args...)}
}

// Locality is how close together a placement's CPUs are.
type Locality int

const (
	// SeveralNUMA: the CPUs span NUMA nodes.
	SeveralNUMA Locality = iota
	// OneNUMA: one NUMA node, several L3 caches (or no L3 reported).
	OneNUMA
	// OneL3: one L3 cache of one NUMA node.
	OneL3
)

// Placement is where a pod's CPUs would go on a node, and its score.
type Placement struct {
	Result   cpualloc.Result
	Locality Locality
	// Moves says the pod fits only once the agent moves pods that may move
	// off a NUMA node (afterMoves): Result then names that node and no
	// CPUs, which are the agent's to choose.
	Moves bool
	// Unaligned says the pod holds devices and its CPUs or memory could
	// not be placed on their nodes, or the node does not say where they
	// are.
	Unaligned bool
	// SharesCore says a CPU of the placement sits beside a thread another
	// workload holds or the node reserves.
	SharesCore bool
	// Score is in [0, MaxScore]: a placement needing moves below every
	// other, then locality (one L3 beats one NUMA node beats several),
	// then a core of its own beats a shared one (placementScore), then the
	// scoring strategy on the CPU left free.
	Score int64
}

// MaxScore is the highest Placement.Score.
const MaxScore = movesBand + int64(OneL3)*2000 + 2000

// Place decides where req's CPUs go on the node v shows. nodeCPUs is the
// node's CPU capacity (the kubelet's count of online CPUs), checked against
// the NodeResourceTopology so that a report from another machine (a node
// replaced under the same name, its agent not yet reporting) is not used;
// 0 skips the check (the cluster makes the same check on the capacities
// SetNodeCPUs gave it, so a view of such a node already says Stale).
func Place(v *NodeView, nodeCPUs int64, req Request) (Placement, error) {
	if err := usable(v, nodeCPUs); err != nil {
		return Placement{}, err
	}
	p, _, err := v.entry(req, true)
	return p, err
}

// Fits is Place's error alone, cheaper where the view placed req before:
// Filter asks it of every node in every cycle.
func Fits(v *NodeView, nodeCPUs int64, req Request) error {
	if err := usable(v, nodeCPUs); err != nil {
		return err
	}
	_, _, err := v.entry(req, false)
	return err
}

// FitsScore is Fits with the placement's score (Filter keeps it for
// Score).
func FitsScore(v *NodeView, nodeCPUs int64, req Request) (int64, error) {
	if err := usable(v, nodeCPUs); err != nil {
		return 0, err
	}
	_, score, err := v.entry(req, false)
	return score, err
}

// ScoreOf is Place's score alone, cheaper where the view placed req
// before (Score, after Filter did).
func ScoreOf(v *NodeView, req Request) (int64, error) {
	if err := usable(v, 0); err != nil {
		return 0, err
	}
	_, score, err := v.entry(req, false)
	return score, err
}

func usable(v *NodeView, nodeCPUs int64) error {
	if v == nil {
		return unfit(NoTopology, "no NodeResourceTopology")
	}
	if v.Err != nil {
		return v.Err
	}
	if n := len(v.machine.topo.CPUs); nodeCPUs > 0 && nodeCPUs != int64(n) {
		return staleErr(n, nodeCPUs)
	}
	return nil
}

func staleErr(listed int, nodeCPUs int64) *Unfit {
	return unfit(Stale, "its NodeResourceTopology lists %d online CPUs, the node reports %d", listed, nodeCPUs)
}

// entry is what the view remembers of req (see memo), placing it first
// if need be; the placement itself only when full is set, placed again
// where the memo had the score. Without full the placement is only
// ranked (see allocate), and the Placement returned is not to be used.
func (v *NodeView) entry(req Request, full bool) (Placement, int64, error) {
	key, ok := req.memoKey()
	if !ok {
		p, err := v.allocate(req, !full)
		return p, p.Score, err
	}
	score, hit, err := v.memo.get(key, req.Memory)
	if hit && (!full || err != nil) {
		return Placement{}, score, err
	}
	p, err := v.allocate(req, !full)
	if !hit {
		v.memo.put(key, req.Memory, p.Score, err)
	}
	return p, p.Score, err
}

// allocate places req on v. Ranked only (rank), the placement is made
// for its score and its error alone: its CPUs come as a list
// (Result.IDs, Result.CPUs empty) and no memory held is made
// (cpualloc's RankBitsFree), the same score at less cost; the sweep and
// Filter ask that of every changed node.
func (v *NodeView) allocate(req Request, rank bool) (Placement, error) {
	// Cheap refusal of a full node, before the allocator: every CPU the pod
	// gets needs room for its share (all of it, for an exclusive policy).
	if need := int64(req.CPUs) * req.shareMilli(); req.CPUs > 0 && v.freeMilli < need {
		return Placement{}, unfit(Insufficient, "%s: %dm of CPU free, the pod needs %dm", req.Policy, v.freeMilli, need)
	}
	var res cpualloc.Result
	var err error
	near, known := v.nearDevices(req)
	if v.countsMemory(req) {
		res, err = v.allocateMemory(req, near, rank)
	} else {
		r := req.alloc()
		r.Near = near
		r.Memory = cpualloc.Memory{} // the node counts none: its CPUs alone, as before
		if rank {
			res, err = v.machine.alloc.RankBitsFree(v.bits, v.burst, nil, v.Reserved, r)
		} else {
			res, err = v.machine.alloc.AllocateBits(v.bits, v.burst, v.Reserved, r)
		}
	}
	switch {
	case errors.Is(err, cpualloc.ErrInvalidRequest):
		return Placement{}, unfit(Invalid, "%v", err)
	case errors.Is(err, cpualloc.ErrInsufficient):
		short := v.shortOf(req)
		if moved, ok := v.afterMoves(req); ok && short == "" {
			return Placement{Result: moved, Locality: OneNUMA, Moves: true, Score: movesScore(v.strategyScore(req, req.CPUs))}, nil
		}
		return Placement{}, &Unfit{Kind: Insufficient, Detail: err.Error(), Short: short}
	case err != nil:
		var u *Unfit
		if errors.As(err, &u) {
			return Placement{}, u
		}
		return Placement{}, unfit(BadTopology, "%v", err)
	}
	p := Placement{Result: res, Locality: locality(v, res), Unaligned: !req.Devices.Empty() && (!known || res.Unaligned)}
	if p.Unaligned {
		p.Locality = SeveralNUMA // the device's traffic crosses nodes
	}
	p.SharesCore = v.sharesACore(cpuList(res))
	p.Score = v.placementScore(req, p)
	return p, nil
}

// cpuList is res's CPUs as a list: a ranking's own, or its set's.
func cpuList(res cpualloc.Result) []int {
	if res.IDs != nil {
		return res.IDs
	}
	return res.CPUs.UnsortedList()
}

// cpuCount is how many CPUs res holds.
func cpuCount(res cpualloc.Result) int {
	if res.IDs != nil {
		return len(res.IDs)
	}
	return res.CPUs.Size()
}

// locality is the placement's: memory on other nodes than the CPUs' (a
// spill) is as far as CPUs on several nodes, and scores as low.
func locality(v *NodeView, res cpualloc.Result) Locality {
	if len(res.NUMANodes) > 1 || len(res.MemNodes) > 1 {
		return SeveralNUMA
	}
	l3 := -2
	for _, id := range cpuList(res) {
		c, _ := v.machine.topo.CPU(id)
		if c.L3 < 0 || (l3 != -2 && c.L3 != l3) {
			return OneNUMA
		}
		l3 = c.L3
	}
	return OneL3
}

package balancer

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/utils/cpuset"
)

// Request is what a new VM or process will need, as `numad -w CPUS:MB` asks.
type Request struct {
	CPUs   float64 // CPUs it will keep busy
	Memory uint64  // bytes
}

// AdviceInput is the machine as measured now.
type AdviceInput struct {
	Partitions []Partition // Busy measured over a short window
	Memory     map[int]NodeMemory
	Distance   func(a, b int) int
	MemMargin  uint64 // free memory every node keeps
}

// Advice is where a request fits best.
type Advice struct {
	Partitions []string      `json:"partitions"`
	Nodes      []int         `json:"nodes"`
	CPUs       cpuset.CPUSet `json:"-"`
	Fits       bool          `json:"fits"`
	Reason     string        `json:"reason"`
	Candidates []Candidate   `json:"candidates"`
}

// Candidate is one set of partitions the advice weighed.
type Candidate struct {
	Partitions []string `json:"partitions"`
	IdleCPUs   float64  `json:"idleCPUs"`   // CPUs not busy on them now
	FreeMemory uint64   `json:"freeMemory"` // bytes free on their nodes, margins kept
	// Utilisation is the busiest partition's load over its CPUs once the
	// request runs there, spread in proportion to CPUs.
	Utilisation float64 `json:"utilisation"`
	Fits        bool    `json:"fits"`
}

// Advise picks the fewest partitions that have the idle CPUs and the free
// memory the request needs: the sizes are tried from the least that could
// hold it upwards, each partition with its nearest others. Among the sets
// that fit, the one the request unbalances least wins (the balancer's own
// score), then the one with most free memory. When nothing fits, the answer
// is every partition, Fits false, and the reason says what is short.
func Advise(in AdviceInput, req Request) Advice {
	if len(in.Partitions) == 0 {
		return Advice{Reason: "no partition to place on"}
	}
	cfg := DefaultConfig()
	cfg.MemMargin = in.MemMargin
	w := newWorld(cfg, Input{Partitions: in.Partitions, Memory: in.Memory, Distance: in.Distance})
	for i, p := range in.Partitions {
		w.load[i] = p.Busy
	}
	g := &Group{Name: "request"}
	all := make([]int, len(in.Partitions))
	for i := range all {
		all[i] = i
	}
	var out Advice
	for k := w.span(g, all, req.CPUs); k <= len(all); k++ {
		var best *Candidate
		var bestSet []int
		var bestCost float64
		for _, set := range w.candidates(all, k) {
			c := w.candidate(set, req)
			cost := w.deltaPhi(g, nil, set, req.CPUs)
			out.Candidates = append(out.Candidates, c)
			if c.Fits && (best == nil || cost < bestCost-1e-9 || (math.Abs(cost-bestCost) <= 1e-9 && c.FreeMemory > best.FreeMemory)) {
				best, bestSet, bestCost = &out.Candidates[len(out.Candidates)-1], set, cost
			}
		}
		if best != nil {
			out.fill(w, bestSet, true)
			out.Reason = fmt.Sprintf("%s: %.1f idle CPUs and %s free beyond the margin for %.1f CPUs and %s; busiest at %.0f%% after placing",
				strings.Join(best.Partitions, ","), best.IdleCPUs, mib(float64(best.FreeMemory)), req.CPUs,
				mib(float64(req.Memory)), 100*best.Utilisation)
			return out
		}
	}
	out.fill(w, all, false)
	c := w.candidate(all, req)
	out.Reason = fmt.Sprintf("no set of partitions has %.1f idle CPUs and %s free (all of them: %.1f idle CPUs, %s free); advising all",
		req.CPUs, mib(float64(req.Memory)), c.IdleCPUs, mib(float64(c.FreeMemory)))
	return out
}

func (a *Advice) fill(w *world, set []int, fits bool) {
	a.Partitions, a.Nodes, a.Fits = w.names(set), w.nodesOf(set), fits
	a.CPUs = cpuset.New()
	for _, i := range set {
		a.CPUs = a.CPUs.Union(w.parts[i].CPUs)
	}
}

// candidate measures a set for the request.
func (w *world) candidate(set []int, req Request) Candidate {
	c := Candidate{Partitions: w.names(set)}
	var capTotal float64
	for _, i := range set {
		capTotal += w.parts[i].Capacity()
		c.IdleCPUs += max(0, w.parts[i].Capacity()-w.load[i])
	}
	for _, i := range set {
		cp := w.parts[i].Capacity()
		c.Utilisation = max(c.Utilisation, (w.load[i]+req.CPUs*cp/capTotal)/cp)
	}
	var free float64
	for _, n := range w.nodesOf(set) {
		free += max(w.free[n], 0)
	}
	c.FreeMemory = uint64(free)
	c.Fits = c.IdleCPUs >= req.CPUs-1e-9 && free >= float64(req.Memory)
	return c
}

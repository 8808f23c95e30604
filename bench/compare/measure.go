// Package compare runs kubelet's static CPU manager policy and Locus's
// allocator on the same topologies, free sets and requests, and judges each
// pair of answers by the measures the allocator optimises, in its order
// (docs/allocator.md): sockets, NUMA nodes, L3 groups, cores shared with
// other pods, whole cores broken. The first measure that differs decides.
package compare

import (
	"fmt"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Measures are the costs of one answer, each lower-is-better, in the order
// they are compared.
type Measures struct {
	Sockets, Nodes, L3s int
	// Shared counts the answer's cores whose other threads another pod
	// already holds: the workload competes with a neighbour on them.
	Shared int
	// Broken counts whole free cores the answer takes only part of: a later
	// whole-core request loses them.
	Broken int
	// Doubled counts the cores the answer holds two or more threads of:
	// what spreading over cores (spread-by-pcpus, kubelet's
	// distribute-cpus-across-cores) promises to avoid. It is judged only for
	// those pairs, and is not one of the five measures compared in order.
	Doubled int
	// Pairs counts the pairs of the answer's threads that share a core (a
	// core holding k of them adds k(k-1)/2): how crowded the request is on
	// its cores. It is what spreading minimises: with two threads a core
	// it equals Doubled, but on four-way SMT a core holding all four of the
	// request's threads crowds them six times where two cores of two do
	// twice, though both count as doubled cores.
	Pairs int
}

// Names are the measures' names, in order, as tables print them.
var Names = [...]string{"sockets", "NUMA nodes", "L3 groups", "shared cores", "broken cores"}

func (m Measures) list() [5]int { return [5]int{m.Sockets, m.Nodes, m.L3s, m.Shared, m.Broken} }

func (m Measures) String() string {
	return fmt.Sprintf("sockets=%d nodes=%d l3=%d shared=%d broken=%d doubled=%d pairs=%d", m.Sockets, m.Nodes, m.L3s, m.Shared, m.Broken, m.Doubled, m.Pairs)
}

// Compare returns the index of the first measure that differs and the sign
// of a minus b on it (-1: a is better); (-1, 0) when all are equal.
func Compare(a, b Measures) (measure, sign int) {
	la, lb := a.list(), b.list()
	for i := range la {
		switch {
		case la[i] < lb[i]:
			return i, -1
		case la[i] > lb[i]:
			return i, 1
		}
	}
	return -1, 0
}

// Pareto compares a with b measure by measure: 1 when a is worse on some
// and better on none (b dominates), -1 when a is better on some and worse
// on none, 0 when they are equal or each is better somewhere.
func Pareto(a, b Measures) int {
	la, lb := a.list(), b.list()
	worse, better := false, false
	for i := range la {
		worse = worse || la[i] > lb[i]
		better = better || la[i] < lb[i]
	}
	switch {
	case worse && !better:
		return 1
	case better && !worse:
		return -1
	}
	return 0
}

// geometry indexes a topology for measuring answers.
type geometry struct {
	cpu   map[int]topology.CPU
	cores map[int][]int // core id -> its CPU ids
}

func newGeometry(t *topology.Topology) geometry {
	g := geometry{cpu: map[int]topology.CPU{}, cores: map[int][]int{}}
	for _, c := range t.CPUs {
		g.cpu[c.ID] = c
		g.cores[c.Core] = append(g.cores[c.Core], c.ID)
	}
	return g
}

// measure scores got, handed out while free held the CPUs nobody had.
func (g geometry) measure(got, free cpuset.CPUSet) Measures {
	sockets, nodes, l3s, cores := map[int]bool{}, map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, id := range got.UnsortedList() {
		c := g.cpu[id]
		sockets[c.Socket], nodes[c.NUMA], l3s[c.L3], cores[c.Core] = true, true, true, true
	}
	m := Measures{Sockets: len(sockets), Nodes: len(nodes), L3s: len(l3s)}
	for core := range cores {
		held, all, mine := false, true, 0 // held: another pod has a thread of it
		for _, id := range g.cores[core] {
			in := got.Contains(id)
			held = held || !in && !free.Contains(id)
			all = all && in
			if in {
				mine++
			}
		}
		if mine > 1 {
			m.Doubled++
		}
		m.Pairs += mine * (mine - 1) / 2
		switch {
		case held:
			m.Shared++
		case !all:
			m.Broken++
		}
	}
	return m
}

// even reports whether got, n CPUs, is split over its NUMA nodes with counts
// that differ by at most one unit: a core of width CPUs when n is a
// multiple of it, else one CPU.
func (g geometry) even(got cpuset.CPUSet, n, width int) bool {
	unit := 1
	if n%width == 0 {
		unit = width
	}
	per := map[int]int{}
	for _, id := range got.UnsortedList() {
		per[g.cpu[id].NUMA]++
	}
	lo, hi := n, 0
	for _, c := range per {
		lo, hi = min(lo, c), max(hi, c)
	}
	return hi-lo <= unit
}

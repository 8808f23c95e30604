package packing

import (
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Domain is a level of the machine a pod can fit in.
type Domain int

const (
	NUMA Domain = iota
	L3
	Socket
	domains
)

func (d Domain) String() string {
	return [...]string{"NUMA", "L3", "socket"}[d]
}

func (d Domain) of(c topology.CPU) int {
	switch d {
	case NUMA:
		return c.NUMA
	case L3:
		return c.L3
	}
	return c.Socket
}

// geometry answers the placement questions the simulation asks, from a
// topology indexed once.
type geometry struct {
	t        *topology.Topology
	siblings map[int]cpuset.CPUSet // every CPU's core, itself included
}

func newGeometry(t *topology.Topology) geometry {
	byCore := map[int][]int{}
	for _, c := range t.CPUs {
		byCore[c.Core] = append(byCore[c.Core], c.ID)
	}
	g := geometry{t: t, siblings: map[int]cpuset.CPUSet{}}
	for _, c := range t.CPUs {
		g.siblings[c.ID] = cpuset.New(byCore[c.Core]...)
	}
	return g
}

// usable is what of free a policy can hand out: every free CPU, or with
// wholeCores only the CPUs of cores whose threads are all free.
func (g geometry) usable(free cpuset.CPUSet, wholeCores bool) cpuset.CPUSet {
	if !wholeCores {
		return free
	}
	var ids []int
	for _, id := range free.UnsortedList() {
		if g.siblings[id].IsSubsetOf(free) {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...)
}

// room reports whether one instance of domain d holds at least n usable CPUs.
func (g geometry) room(usable cpuset.CPUSet, d Domain, n int) bool {
	count := map[int]int{}
	for _, id := range usable.UnsortedList() {
		c, _ := g.t.CPU(id)
		count[d.of(c)]++
		if count[d.of(c)] >= n {
			return true
		}
	}
	return false
}

// span is the number of instances of domain d the CPUs touch.
func (g geometry) span(cpus cpuset.CPUSet, d Domain) int {
	seen := map[int]bool{}
	for _, id := range cpus.UnsortedList() {
		c, _ := g.t.CPU(id)
		seen[d.of(c)] = true
	}
	return len(seen)
}

// sharesCore reports whether some CPU of cpus has a sibling thread that is
// neither in cpus nor free, so the pod shares a physical core with another
// pod or with the reserved CPUs.
func (g geometry) sharesCore(cpus, free cpuset.CPUSet) bool {
	for _, id := range cpus.UnsortedList() {
		if !g.siblings[id].Difference(cpus).IsSubsetOf(free) {
			return true
		}
	}
	return false
}

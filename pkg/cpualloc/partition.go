package cpualloc

import (
	"fmt"
	"sort"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// ContainerKind says how a container of a pod runs, which decides whether
// its CPUs are its own for the pod's life or lent to it for a while.
type ContainerKind int

const (
	// App is a container of spec.containers: it runs for the pod's life.
	App ContainerKind = iota
	// Init is an init container that runs to completion before the next
	// one starts: its CPUs are lent, and the app containers reuse them.
	Init
	// Sidecar is a restartable init container (restartPolicy Always): it
	// starts in the init sequence and runs for the pod's life, so its
	// CPUs are its own from the moment it starts.
	Sidecar
)

// ContainerCPUs is one container's share of a pod's CPUs, as the pod's spec
// lists it: init containers and sidecars in spec.initContainers order,
// then the app containers in spec.containers order.
type ContainerCPUs struct {
	Name string
	Kind ContainerKind
	CPUs int
}

// Partition splits a pod's CPU set among its containers, as the kubelet's
// static CPU manager would hand them out one by one, but inside the set the
// pod already holds (so the pod stays where its set was placed):
//
//   - the containers are taken in spec order, init containers and sidecars
//     first; each stays inside one NUMA node of the set when one holds
//     enough of what is free at its turn (the node with the fewest such
//     CPUs that does, lowest id among equals, so bigger nodes stay whole
//     for the containers after it), and takes whole cores first (a core all of whose threads
//     are free), lowest CPU first, then its remaining threads from the
//     core with the fewest free threads (a left-over first), lowest CPU
//     first;
//   - a sidecar keeps its CPUs: no container after it gets them;
//   - an init container takes its CPUs from those free at its turn
//     without keeping them: they are what the next init containers and
//     the app containers take again.
//
// It is a pure function of its arguments. It fails when a container asks
// for no CPU, a name repeats, a CPU of set is not in t, the containers do
// not find their counts in set, or they leave some of set to none of them
// (set is not the size the containers' counts make, by the rule of
// Kubernetes' effective pod limit).
func Partition(t *topology.Topology, set cpuset.CPUSet, cs []ContainerCPUs) (map[string]cpuset.CPUSet, error) {
	coreOf, nodeOf := map[int]int{}, map[int]int{}
	width := map[int]int{}
	for _, c := range t.CPUs {
		coreOf[c.ID], nodeOf[c.ID] = c.Core, c.NUMA
		width[c.Core]++
	}
	for _, id := range set.UnsortedList() {
		if _, ok := coreOf[id]; !ok {
			return nil, fmt.Errorf("CPU %d of the pod's set %s is not on this machine", id, set)
		}
	}
	out := make(map[string]cpuset.CPUSet, len(cs))
	free := set // of the sidecars and app containers
	used := cpuset.New()
	for _, c := range cs {
		if _, dup := out[c.Name]; dup {
			return nil, fmt.Errorf("container %q is listed twice", c.Name)
		}
		if c.CPUs < 1 {
			return nil, fmt.Errorf("container %q asks for %d CPUs; each container needs at least 1 to have a set of its own", c.Name, c.CPUs)
		}
		if free.Size() < c.CPUs {
			return nil, fmt.Errorf("container %q asks for %d CPUs, but %d of the pod's %d are left at its turn (%s)", c.Name, c.CPUs, free.Size(), set.Size(), free)
		}
		part := takeCores(oneNode(free, c.CPUs, nodeOf), c.CPUs, coreOf, width)
		out[c.Name] = part
		used = used.Union(part)
		if c.Kind != Init {
			free = free.Difference(part)
		}
	}
	if !used.Equals(set) {
		return nil, fmt.Errorf("the containers take %d of the pod's %d CPUs, leaving %s to none of them", used.Size(), set.Size(), set.Difference(used))
	}
	return out, nil
}

// oneNode is the part of free on the NUMA node with the fewest free CPUs
// that still holds n (lowest node id among equals), or free itself when no
// node holds n: a container split across nodes only when it must be.
func oneNode(free cpuset.CPUSet, n int, nodeOf map[int]int) cpuset.CPUSet {
	byNode := map[int][]int{}
	for _, id := range free.UnsortedList() {
		byNode[nodeOf[id]] = append(byNode[nodeOf[id]], id)
	}
	best := -1
	for node, ids := range byNode {
		if len(ids) < n {
			continue
		}
		if best < 0 || len(ids) < len(byNode[best]) || (len(ids) == len(byNode[best]) && node < best) {
			best = node
		}
	}
	if best < 0 {
		return free
	}
	return cpuset.New(byNode[best]...)
}

// takeCores takes n of free: whole cores first, lowest CPU first, then
// single threads from the cores with the fewest free threads.
func takeCores(free cpuset.CPUSet, n int, coreOf, width map[int]int) cpuset.CPUSet {
	byCore := map[int][]int{}
	for _, id := range free.List() { // sorted: each core's threads in order
		byCore[coreOf[id]] = append(byCore[coreOf[id]], id)
	}
	cores := make([]int, 0, len(byCore))
	for c := range byCore {
		cores = append(cores, c)
	}
	// Lowest first CPU first: the order the set is written in.
	sort.Slice(cores, func(i, j int) bool { return byCore[cores[i]][0] < byCore[cores[j]][0] })
	var got []int
	taken := map[int]bool{}
	for _, c := range cores {
		if ids := byCore[c]; len(ids) == width[c] && len(ids) <= n-len(got) {
			got = append(got, ids...)
			taken[c] = true
		}
	}
	if len(got) < n {
		rest := make([]int, 0, len(cores))
		for _, c := range cores {
			if !taken[c] {
				rest = append(rest, c)
			}
		}
		// Fewest free threads first: a left-over core before a whole
		// one; stable, so lowest CPU first among equals.
		sort.SliceStable(rest, func(i, j int) bool { return len(byCore[rest[i]]) < len(byCore[rest[j]]) })
		for _, c := range rest {
			for _, id := range byCore[c] {
				if len(got) == n {
					break
				}
				got = append(got, id)
			}
		}
	}
	return cpuset.New(got...)
}

package kubelet

//go:generate go run ../cmd/kubelet-topologies

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Fixture is one of the CPU topologies kubelet's CPU manager tests use
// (k8s.io/kubernetes pkg/kubelet/cm/cpumanager/policy_test.go), under the
// name it has there, as a Locus topology. kubelet's tests give no NUMA
// distances; nodes of one socket get 12 and the others 21, as Linux reports
// on most two-socket machines. Core ids are renumbered machine-wide (see
// decode); nothing else changes.
type Fixture struct {
	Name     string
	Topology *topology.Topology
}

// Fixtures decodes every topology kubelet's tests define, in their order.
func Fixtures() ([]Fixture, error) {
	out := make([]Fixture, 0, len(encoded))
	for _, e := range encoded {
		t, err := decode(e.runs)
		if err != nil {
			return nil, fmt.Errorf("kubelet %s fixture %s: %w", kubeletVersion, e.name, err)
		}
		out = append(out, Fixture{Name: e.name, Topology: t})
	}
	return out, nil
}

func decode(runs string) (*topology.Topology, error) {
	t := &topology.Topology{}
	for _, run := range strings.Fields(runs) {
		var lo, hi, core, step, socket, numa, l3 int
		f := strings.FieldsFunc(run, func(r rune) bool { return r == '-' || r == ':' })
		if len(f) != 6 {
			return nil, fmt.Errorf("run %q", run)
		}
		coreStr, stepStr, ok := strings.Cut(f[2], "+")
		if !ok {
			return nil, fmt.Errorf("run %q: core without step", run)
		}
		var err error
		for i, p := range []*int{&lo, &hi, &core, &step, &socket, &numa, &l3} {
			s := []string{f[0], f[1], coreStr, stepStr, f[3], f[4], f[5]}[i]
			if *p, err = strconv.Atoi(s); err != nil {
				return nil, fmt.Errorf("run %q: %w", run, err)
			}
		}
		for id := lo; id <= hi; id++ {
			t.CPUs = append(t.CPUs, topology.CPU{ID: id, Core: core + (id-lo)*step, Socket: socket, Die: socket, NUMA: numa, L3: l3})
		}
	}
	slices.SortFunc(t.CPUs, func(a, b topology.CPU) int { return a.ID - b.ID })
	// Some fixtures number cores per socket; kubelet's discovery makes them
	// unique on a real machine (by lowest thread), and so does Locus's, so
	// cores are renumbered per (socket, core) in order of their lowest CPU.
	unique := map[[2]int]int{}
	for i, c := range t.CPUs {
		key := [2]int{c.Socket, c.Core}
		if _, ok := unique[key]; !ok {
			unique[key] = len(unique)
		}
		t.CPUs[i].Core = unique[key]
	}
	var nodes []int
	socketsOf := map[int][]int{}
	for _, c := range t.CPUs {
		if !slices.Contains(nodes, c.NUMA) {
			nodes = append(nodes, c.NUMA)
		}
		if !slices.Contains(socketsOf[c.NUMA], c.Socket) {
			socketsOf[c.NUMA] = append(socketsOf[c.NUMA], c.Socket)
		}
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		node := topology.NUMANode{ID: n, MemoryTotal: 64 << 30, MemoryFree: 48 << 30}
		node.CPUs = t.CPUsWhere(func(c topology.CPU) bool { return c.NUMA == n })
		for _, m := range nodes {
			d := 21
			switch {
			case m == n:
				d = 10
			case slices.Equal(socketsOf[m], socketsOf[n]):
				d = 12
			}
			node.Distances = append(node.Distances, d)
		}
		t.Nodes = append(t.Nodes, node)
	}
	t.Isolated = cpuset.New()
	return t, t.Validate()
}

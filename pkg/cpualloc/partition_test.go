package cpualloc

import (
	"fmt"
	"math/rand"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// 8 two-thread cores, siblings adjacent: core c is CPUs 2c and 2c+1.
var partAdjacent = fixture.Shape{Name: "1s-8c-ht-adjacent", Sockets: 1, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 8, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 1 << 30}

// The same, siblings split: core c is CPUs c and c+8.
var partSplit = fixture.Shape{Name: "1s-8c-ht-split", Sockets: 1, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 8, ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 1 << 30}

// Two NUMA nodes of 4 two-thread cores: node 0 is CPUs 0-7, node 1 8-15.
var partTwoNodes = fixture.Shape{Name: "1s-2n-8c-ht-adjacent", Sockets: 1, NUMAPerSocket: 2, L3PerNUMA: 1,
	CoresPerSocket: 8, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 1 << 30}

func app(name string, n int) ContainerCPUs   { return ContainerCPUs{Name: name, Kind: App, CPUs: n} }
func initC(name string, n int) ContainerCPUs { return ContainerCPUs{Name: name, Kind: Init, CPUs: n} }
func sidecar(name string, n int) ContainerCPUs {
	return ContainerCPUs{Name: name, Kind: Sidecar, CPUs: n}
}

func TestPartition(t *testing.T) {
	for _, tc := range []struct {
		name    string
		shape   fixture.Shape
		set     string
		cs      []ContainerCPUs
		want    map[string]string
		wantErr string
	}{
		{"one container takes the set", partAdjacent, "4-7", []ContainerCPUs{app("a", 4)},
			map[string]string{"a": "4-7"}, ""},
		{"spec order, whole cores", partAdjacent, "0-5", []ContainerCPUs{app("a", 2), app("b", 4)},
			map[string]string{"a": "0-1", "b": "2-5"}, ""},
		{"an odd count takes a whole core's thread, the next odd one the left-over", partAdjacent, "0-5",
			[]ContainerCPUs{app("a", 1), app("b", 4), app("c", 1)},
			map[string]string{"a": "0", "b": "2-5", "c": "1"}, ""},
		{"a left-over before a whole core for a lone thread", partAdjacent, "0-5",
			[]ContainerCPUs{app("a", 3), app("b", 1), app("c", 2)},
			map[string]string{"a": "0-2", "b": "3", "c": "4-5"}, ""},
		{"whole cores on split siblings", partSplit, "0-1,8-9", []ContainerCPUs{app("a", 2), app("b", 2)},
			map[string]string{"a": "0,8", "b": "1,9"}, ""},
		{"a set with a half core: whole cores first", partAdjacent, "1-5", []ContainerCPUs{app("a", 2), app("b", 3)},
			map[string]string{"a": "2-3", "b": "1,4-5"}, ""},
		{"sidecar keeps its CPUs, the app the rest", partAdjacent, "0-5",
			[]ContainerCPUs{sidecar("log", 2), app("web", 4)},
			map[string]string{"log": "0-1", "web": "2-5"}, ""},
		{"init CPUs are reused by the app", partAdjacent, "0-3",
			[]ContainerCPUs{initC("setup", 4), app("web", 2), app("cache", 2)},
			map[string]string{"setup": "0-3", "web": "0-1", "cache": "2-3"}, ""},
		{"init after a sidecar takes around it", partAdjacent, "0-5",
			[]ContainerCPUs{sidecar("proxy", 2), initC("migrate", 4), app("web", 2)},
			map[string]string{"proxy": "0-1", "migrate": "2-5", "web": "2-3"}, ""},
		{"an init before a sidecar may use the sidecar's CPUs", partAdjacent, "0-3",
			[]ContainerCPUs{initC("fetch", 4), sidecar("proxy", 2), app("web", 2)},
			map[string]string{"fetch": "0-3", "proxy": "0-1", "web": "2-3"}, ""},
		{"a set across two nodes: each container inside one where one holds it", partTwoNodes, "4-11",
			[]ContainerCPUs{app("a", 2), app("b", 4), app("c", 2)},
			map[string]string{"a": "4-5", "b": "8-11", "c": "6-7"}, ""},
		{"a container no node holds spans them", partTwoNodes, "4-11",
			[]ContainerCPUs{app("a", 6), app("b", 2)},
			map[string]string{"a": "4-9", "b": "10-11"}, ""},
		{"too few CPUs", partAdjacent, "0-3", []ContainerCPUs{app("a", 2), app("b", 4)}, nil,
			`container "b" asks for 4 CPUs, but 2 of the pod's 4 are left at its turn (2-3)`},
		{"CPUs left to none", partAdjacent, "0-5", []ContainerCPUs{app("a", 2)}, nil,
			"the containers take 2 of the pod's 6 CPUs, leaving 2-5 to none of them"},
		{"a container without CPUs", partAdjacent, "0-1", []ContainerCPUs{app("a", 2), app("b", 0)}, nil,
			`container "b" asks for 0 CPUs; each container needs at least 1 to have a set of its own`},
		{"a name twice", partAdjacent, "0-3", []ContainerCPUs{initC("a", 2), app("a", 2)}, nil,
			`container "a" is listed twice`},
		{"a CPU not on the machine", partAdjacent, "14-16", []ContainerCPUs{app("a", 3)}, nil,
			"CPU 16 of the pod's set 14-16 is not on this machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Partition(fixture.MustBuild(tc.shape), mustParse(t, tc.set), tc.cs)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q (got %v)", err, tc.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			for name, w := range tc.want {
				if got[name].String() != w {
					t.Errorf("%s: got %s, want %s (all: %v)", name, got[name], w, got)
				}
			}
		})
	}
}

// For random pods on random whole-core sets: the parts of the containers
// that run together are disjoint (the sidecars and app containers, and each
// init container with the sidecars before it), their union is the pod's
// set, each container has its count,
// and no part holds more than one core in part (two-thread cores).
func TestPartitionProperties(t *testing.T) {
	for _, shape := range []fixture.Shape{partAdjacent, partSplit} {
		topo := fixture.MustBuild(shape)
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 2000; i++ {
			cs, size := randomPod(rng)
			if size > 16 {
				continue
			}
			// A random set of whole cores of the right size (one
			// thread short when the size is odd).
			cores := rng.Perm(8)[:(size+1)/2]
			var ids []int
			for _, c := range cores {
				for _, cpu := range topo.CPUs {
					if cpu.Core == c {
						ids = append(ids, cpu.ID)
					}
				}
			}
			set := cpuset.New(ids...)
			if set.Size() > size {
				set = set.Difference(cpuset.New(set.List()[set.Size()-1]))
			}
			name := fmt.Sprintf("%s %v on %s", shape.Name, cs, set)
			parts, err := Partition(topo, set, cs)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkPartition(t, name, topo, set, cs, parts)
		}
	}
}

// randomPod is up to two init containers, a sidecar and three app
// containers, and the pod's count by Kubernetes' rule.
func randomPod(rng *rand.Rand) ([]ContainerCPUs, int) {
	var cs []ContainerCPUs
	running, sidecars, initMax := 0, 0, 0
	for i := 0; i < 3; i++ {
		n := 1 + rng.Intn(4)
		switch rng.Intn(3) {
		case 0:
			cs = append(cs, initC(fmt.Sprintf("init%d", i), n))
			initMax = max(initMax, n+sidecars)
		case 1:
			cs = append(cs, sidecar(fmt.Sprintf("side%d", i), n))
			sidecars += n
			initMax = max(initMax, sidecars)
		}
	}
	for i := 0; i < 1+rng.Intn(3); i++ {
		n := 1 + rng.Intn(4)
		cs = append(cs, app(fmt.Sprintf("app%d", i), n))
		running += n
	}
	return cs, max(running+sidecars, initMax)
}

func checkPartition(t *testing.T, name string, topo *topology.Topology, set cpuset.CPUSet, cs []ContainerCPUs, parts map[string]cpuset.CPUSet) {
	t.Helper()
	union, lasting := cpuset.New(), cpuset.New()
	coreOf := map[int]int{}
	for _, c := range topo.CPUs {
		coreOf[c.ID] = c.Core
	}
	for _, c := range cs {
		p := parts[c.Name]
		if p.Size() != c.CPUs {
			t.Errorf("%s: %s has %s, not %d CPUs", name, c.Name, p, c.CPUs)
		}
		if !p.IsSubsetOf(set) {
			t.Errorf("%s: %s has %s, outside the pod's set", name, c.Name, p)
		}
		if !p.Intersection(lasting).IsEmpty() {
			t.Errorf("%s: %s has %s, overlapping a sidecar's or another app container's %s", name, c.Name, p, lasting)
		}
		if c.Kind != Init {
			lasting = lasting.Union(p)
		}
		union = union.Union(p)
		partial := map[int]int{}
		for _, id := range p.List() {
			partial[coreOf[id]]++
		}
		split := 0
		for _, n := range partial {
			if n < 2 {
				split++
			}
		}
		if split > 1 {
			t.Errorf("%s: %s has %s, %d cores in part", name, c.Name, p, split)
		}
	}
	if !union.Equals(set) {
		t.Errorf("%s: the parts cover %s, not the pod's %s", name, union, set)
	}
}

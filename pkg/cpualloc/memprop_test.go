package cpualloc

import (
	"errors"
	"maps"
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// TestMemoryRandomStates places random requests one after another on random
// states of small machines, holding each placement (With, then Hold's
// amounts off Free), and checks every decision against a brute force over
// every group of nodes: nothing is over-committed, the memory group holds
// the memory and contains the CPUs' nodes, equals them whenever they hold
// it, is no larger than needed, and a request is refused only when no group
// of nodes holds its memory and its CPUs together.
func TestMemoryRandomStates(t *testing.T) {
	hugeFour := memFourNodes
	hugeFour.Name = "mem-4n-hugepages"
	hugeFour.MemoryByNode = map[int]uint64{1: 16 * gib, 2: 128 * gib}
	hugeFour.HugePages = []fixture.NodeHugePages{
		{Node: 0, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 1024}},
		{Node: 3, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 8}},
	}
	for _, shape := range []fixture.Shape{memTwoNodes, memFourNodes, hugeFour, fixture.MemoryOnly} {
		t.Run(shape.Name, func(t *testing.T) {
			topo := fixture.MustBuild(shape)
			r := rand.New(rand.NewPCG(39, uint64(len(shape.Name))))
			placed, refused := 0, 0
			for range 150 {
				st := State{Exclusive: randomExclusive(r, topo), Free: randomFree(r, topo)}
				for range 10 {
					req := randomMemRequest(r)
					res, err := Allocate(topo, st, cpuset.New(), req)
					switch {
					case errors.Is(err, ErrInvalidRequest):
						continue
					case err != nil:
						refused++
						checkRefusal(t, topo, st, req, err)
						continue
					}
					placed++
					checkMemPlacement(t, topo, st, req, res)
					next := st.With(res, req)
					for id, h := range res.MemHeld {
						for k := range memKinds {
							if *h.at(k) > roomOf(st.Free[id], k) {
								t.Fatalf("%+v on %v: node %d holds %+v of %+v free: over-committed", req, st.Free, id, h, st.Free[id])
							}
						}
					}
					if want := Subtract(st.Free, res.MemHeld); !maps.Equal(next.Free, want) {
						t.Fatalf("With left free %v, want %v", next.Free, want)
					}
					st = next
				}
			}
			t.Logf("placed %d, refused %d", placed, refused)
			if placed == 0 || refused == 0 {
				t.Fatalf("placed %d, refused %d: the states do not exercise both", placed, refused)
			}
		})
	}
}

func randomExclusive(r *rand.Rand, topo *topology.Topology) Bits {
	var taken []int
	share := r.Float64() * 0.7
	for _, c := range topo.CPUs {
		if r.Float64() < share {
			taken = append(taken, c.ID)
		}
	}
	return NewBits(taken...)
}

func randomFree(r *rand.Rand, topo *topology.Topology) map[int]Memory {
	free := map[int]Memory{}
	for _, n := range topo.Nodes {
		if r.IntN(8) == 0 {
			continue // absent: nothing free
		}
		m := Memory{Bytes: r.Uint64N(48*gib) + r.Uint64N(1<<20)}
		if r.IntN(2) == 0 {
			m.HugePages2Mi = r.Uint64N(600)*pageBytes2Mi + r.Uint64N(2)*(pageBytes2Mi/2)
		}
		if r.IntN(2) == 0 {
			m.HugePages1Gi = r.Uint64N(5) * pageBytes1Gi
		}
		free[n.ID] = m
	}
	return free
}

func randomMemRequest(r *rand.Rand) Request {
	policies := []Policy{"", FullPCPUs, SpreadByPCPUs, DistributeAcrossNUMA, StaticBurst}
	req := Request{CPUs: 1 + r.IntN(8), Policy: policies[r.IntN(len(policies))]}
	if r.IntN(2) == 0 {
		req.NUMAStrategy = LeastAllocated
	}
	if r.IntN(6) > 0 {
		req.Memory.Bytes = r.Uint64N(64 * gib)
	}
	if r.IntN(4) == 0 {
		req.Memory.HugePages2Mi = r.Uint64N(800) * pageBytes2Mi
	}
	if r.IntN(4) == 0 {
		req.Memory.HugePages1Gi = r.Uint64N(8) * pageBytes1Gi
	}
	return req
}

// holdsOracle is, counted apart from the allocator, whether nodes (ids)
// hold m: per kind, the sum of each node's free whole pages.
func holdsOracle(free map[int]Memory, nodes []int, m Memory) bool {
	var room [3]uint64
	add := func(i int, v uint64) {
		if sum, carry := bits.Add64(room[i], v, 0); carry == 0 {
			room[i] = sum
		} else {
			room[i] = math.MaxUint64
		}
	}
	for _, id := range nodes {
		f := free[id]
		add(0, f.Bytes)
		add(1, f.HugePages2Mi/pageBytes2Mi*pageBytes2Mi)
		add(2, f.HugePages1Gi/pageBytes1Gi*pageBytes1Gi)
	}
	return room[0] >= m.Bytes && room[1] >= m.HugePages2Mi && room[2] >= m.HugePages1Gi
}

// cpuNodeGroups is every non-empty set of the topology's CPU nodes (ids).
func cpuNodeGroups(topo *topology.Topology) [][]int {
	var ids []int
	for _, n := range topo.Nodes {
		if !n.CPUs.IsEmpty() {
			ids = append(ids, n.ID)
		}
	}
	var out [][]int
	for mask := 1; mask < 1<<len(ids); mask++ {
		var g []int
		for i, id := range ids {
			if mask&(1<<i) != 0 {
				g = append(g, id)
			}
		}
		out = append(out, g)
	}
	return out
}

// placesWithin says whether the policy finds req's CPUs among group's CPUs
// alone, memory not counted.
func placesWithin(topo *topology.Topology, st State, group []int, req Request) bool {
	var outside []int
	for _, c := range topo.CPUs {
		if !slices.Contains(group, c.NUMA) {
			outside = append(outside, c.ID)
		}
	}
	inside := State{Exclusive: st.Exclusive.Union(cpuset.New(outside...)), BurstMilli: st.BurstMilli}
	_, err := Allocate(topo, inside, cpuset.New(), req)
	return err == nil
}

func checkRefusal(t *testing.T, topo *topology.Topology, st State, req Request, err error) {
	t.Helper()
	if !errors.Is(err, ErrInsufficient) {
		t.Fatalf("%+v: error %v is neither sentinel", req, err)
	}
	for _, g := range cpuNodeGroups(topo) {
		if holdsOracle(st.Free, g, req.Memory) && placesWithin(topo, st, g, req) {
			t.Fatalf("%+v on free %v, exclusive %s: refused (%v), but nodes %v hold it", req, st.Free, st.Exclusive, err, g)
		}
	}
}

func checkMemPlacement(t *testing.T, topo *topology.Topology, st State, req Request, res Result) {
	t.Helper()
	if !isSubset(res.NUMANodes, res.MemNodes) || !slices.IsSorted(res.MemNodes) {
		t.Fatalf("%+v: mem nodes %v do not contain the CPUs' nodes %v", req, res.MemNodes, res.NUMANodes)
	}
	if !holdsOracle(st.Free, res.MemNodes, req.Memory) {
		t.Fatalf("%+v: mem nodes %v do not hold it (free %v)", req, res.MemNodes, st.Free)
	}
	if holdsOracle(st.Free, res.NUMANodes, req.Memory) && !slices.Equal(res.MemNodes, res.NUMANodes) {
		t.Fatalf("%+v: the CPUs' nodes %v hold it, yet mem nodes are %v", req, res.NUMANodes, res.MemNodes)
	}
	for _, g := range cpuNodeGroups(topo) {
		if len(g) < len(res.MemNodes) && isSubset(res.NUMANodes, g) && holdsOracle(st.Free, g, req.Memory) {
			t.Fatalf("%+v: mem nodes %v, but the smaller %v around the CPUs' nodes holds it", req, res.MemNodes, g)
		}
	}
	wantHeld := Hold(res.MemNodes, st.Free, req.Memory)
	if req.Memory.IsZero() {
		wantHeld = nil // nothing accounted
	}
	if !reflect.DeepEqual(res.MemHeld, wantHeld) {
		t.Fatalf("%+v: held %v, want %v", req, res.MemHeld, wantHeld)
	}
	// Without memory, or with memory not accounted, the decision is the one
	// made before memory was a dimension.
	plain := req
	plain.Memory = Memory{}
	unaccounted := State{Exclusive: st.Exclusive, BurstMilli: st.BurstMilli}
	want, wantErr := Allocate(topo, unaccounted, cpuset.New(), plain)
	for _, c := range []struct {
		st  State
		req Request
	}{{st, plain}, {unaccounted, req}} {
		got, err := Allocate(topo, c.st, cpuset.New(), c.req)
		if !reflect.DeepEqual(got, want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("%+v: %+v, %v; without memory %+v, %v", c.req, got, err, want, wantErr)
		}
	}
}

// FuzzAllocateMemory asks for fuzzed amounts of memory against fuzzed free
// amounts, the largest uint64 among them, on the small machines: whatever
// they are, a decision is a placement that holds (checked as
// TestMemoryRandomStates checks it) or an error of one of the sentinels.
func FuzzAllocateMemory(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(2), uint64(48*gib), uint64(0), uint64(0), uint64(10*gib), uint64(20*gib), uint64(0))
	f.Add(uint64(2), uint8(1), uint8(4), uint64(16*gib), uint64(pageBytes2Mi), uint64(pageBytes1Gi), uint64(10*gib), uint64(1<<63), uint64(pageBytes1Gi))
	f.Add(uint64(3), uint8(1), uint8(1), uint64(math.MaxUint64), uint64(3<<20), uint64(0), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64))
	f.Add(uint64(4), uint8(0), uint8(9), uint64(0), uint64(0), uint64(2*pageBytes1Gi), uint64(0), uint64(gib), uint64(8*pageBytes1Gi))
	shapes := []fixture.Shape{memTwoNodes, memFourNodes}
	f.Fuzz(func(t *testing.T, seed uint64, shape, cpus uint8, bytes, huge2Mi, huge1Gi, freeBytes, freeOdd, freeHuge uint64) {
		topo := fixture.MustBuild(shapes[int(shape)%len(shapes)])
		r := rand.New(rand.NewPCG(seed, 39))
		free := map[int]Memory{}
		for i, n := range topo.Nodes {
			if i%2 == 0 {
				free[n.ID] = Memory{Bytes: freeBytes, HugePages2Mi: freeHuge, HugePages1Gi: freeHuge}
			} else {
				free[n.ID] = Memory{Bytes: freeOdd, HugePages2Mi: freeOdd, HugePages1Gi: freeHuge}
			}
		}
		st := State{Exclusive: randomExclusive(r, topo), Free: free}
		req := randomMemRequest(r)
		req.CPUs = 1 + int(cpus%12)
		req.Memory = Memory{Bytes: bytes, HugePages2Mi: huge2Mi, HugePages1Gi: huge1Gi}
		res, err := Allocate(topo, st, cpuset.New(), req)
		switch {
		case errors.Is(err, ErrInvalidRequest):
			return
		case err != nil:
			checkRefusal(t, topo, st, req, err)
			return
		}
		checkMemPlacement(t, topo, st, req, res)
	})
}

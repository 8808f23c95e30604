package cpualloc

import (
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Two nodes of four two-thread cores (CPUs 0-7 and 8-15), and four nodes of
// two (0-3, 4-7 on socket 0 at distance 12 of each other, 8-11, 12-15 on
// socket 1, 21 across).
var (
	nearTwo = fixture.Shape{Name: "near-2n", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
		ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 * gib}
	nearFour = fixture.Shape{Name: "near-4n", Sockets: 2, NUMAPerSocket: 2, L3PerNUMA: 1, CoresPerSocket: 4,
		ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 * gib}
)

func TestAllocateNear(t *testing.T) {
	cases := []struct {
		name          string
		shape         fixture.Shape
		exclusive     string
		free          map[int]Memory
		req           Request
		want          string
		wantNodes     []int
		wantMemNodes  []int
		wantUnaligned bool
		wantErr       string
	}{
		{name: "the device's node, though packing would take node 0", shape: nearTwo, exclusive: "0-1",
			req: Request{CPUs: 2, Near: []int{1}}, want: "8-9", wantNodes: []int{1}},
		{name: "whole cores on the device's node", shape: nearTwo, exclusive: "8",
			req: Request{CPUs: 4, Near: []int{1}}, want: "10-13", wantNodes: []int{1}},
		{name: "a device twice is one node", shape: nearTwo,
			req: Request{CPUs: 2, Near: []int{1, 1}}, want: "8-9", wantNodes: []int{1}},
		{name: "no room on the device's node: the other, unaligned", shape: nearTwo, exclusive: "8-13",
			req: Request{CPUs: 4, Near: []int{1}}, want: "0-3", wantNodes: []int{0}, wantUnaligned: true},
		{name: "too big for the device's node: both", shape: nearTwo,
			req: Request{CPUs: 12, Near: []int{0}}, want: "0-11", wantNodes: []int{0, 1}, wantUnaligned: true},
		{name: "four nodes: the device's node", shape: nearFour,
			req: Request{CPUs: 2, Near: []int{2}}, want: "8-9", wantNodes: []int{2}},
		{name: "four nodes: its node full, the same socket's", shape: nearFour, exclusive: "12-15",
			req: Request{CPUs: 2, Near: []int{3}}, want: "8-9", wantNodes: []int{2}, wantUnaligned: true},
		{name: "four nodes: its socket full, the other socket", shape: nearFour, exclusive: "8-15,0-1",
			req: Request{CPUs: 2, Near: []int{3}}, want: "2-3", wantNodes: []int{0}, wantUnaligned: true},
		{name: "four nodes: the nearest pair, not two far nodes", shape: nearFour, exclusive: "1,5",
			req: Request{CPUs: 6, Near: []int{2}}, want: "8-13", wantNodes: []int{2, 3}, wantUnaligned: true},
		{name: "four nodes: devices on two nodes of two sockets", shape: nearFour,
			req: Request{CPUs: 6, Near: []int{1, 2}}, want: "4-9", wantNodes: []int{1, 2}},
		{name: "memory too big for the device's node spills", shape: nearTwo,
			free: map[int]Memory{0: {Bytes: 8 * gib}, 1: {Bytes: 1 * gib}},
			req:  Request{CPUs: 2, Near: []int{1}, Memory: Memory{Bytes: 2 * gib}}, want: "8-9", wantNodes: []int{1},
			wantMemNodes: []int{0, 1}, wantUnaligned: true},
		{name: "memory on the device's node", shape: nearTwo,
			free: map[int]Memory{0: {Bytes: 1 * gib}, 1: {Bytes: 8 * gib}},
			req:  Request{CPUs: 2, Near: []int{1}, Memory: Memory{Bytes: 2 * gib}}, want: "8-9", wantNodes: []int{1}},
		{name: "a device on a memory-only node: the nearest CPU nodes", shape: fixture.MemoryOnly,
			req: Request{CPUs: 2, Near: []int{2}}, want: "0-1", wantNodes: []int{0}, wantUnaligned: true},
		{name: "an unknown node is refused", shape: nearTwo,
			req: Request{CPUs: 2, Near: []int{0, 7}}, wantErr: "near: node 7 is not a NUMA node of the topology (nodes [0 1])"},
		{name: "refused as without devices", shape: nearTwo, exclusive: "0-11",
			req: Request{CPUs: 6, Near: []int{1}}, wantErr: "full-pcpus: not enough free CPUs: requested=6, available=4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topo := fixture.MustBuild(tc.shape)
			st := State{Exclusive: BitsOf(mustParse(t, tc.exclusive)), Free: tc.free}
			res, err := Allocate(topo, st, cpuset.New(), tc.req)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q (got %s)", err, tc.wantErr, res.CPUs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.CPUs.String() != tc.want || !slices.Equal(res.NUMANodes, tc.wantNodes) || res.Unaligned != tc.wantUnaligned {
				t.Fatalf("got %s on %v unaligned %v, want %s on %v unaligned %v",
					res.CPUs, res.NUMANodes, res.Unaligned, tc.want, tc.wantNodes, tc.wantUnaligned)
			}
			wantMem := tc.wantMemNodes
			if wantMem == nil {
				wantMem = tc.wantNodes
			}
			if !slices.Equal(res.MemNodes, wantMem) {
				t.Fatalf("memory on %v, want %v", res.MemNodes, wantMem)
			}
		})
	}
}

// TestNearProperties: on random states, a request with devices is refused
// exactly when the same request without them is, never takes a CPU it may
// not, lands on the devices' nodes whenever it fits there, and says it is
// unaligned exactly when its CPUs or memory lie elsewhere.
func TestNearProperties(t *testing.T) {
	for _, shape := range []fixture.Shape{nearTwo, nearFour, fixture.AMDNPS4, fixture.MemoryOnly} {
		t.Run(shape.Name, func(t *testing.T) {
			topo := fixture.MustBuild(shape)
			r := rand.New(rand.NewPCG(40, uint64(len(shape.Name))))
			for range 400 {
				sc := randomScenario(r, topo, r.Float64())
				checkNear(t, sc, randomNear(r, topo))
			}
		})
	}
}

func randomNear(r *rand.Rand, topo *topology.Topology) []int {
	near := []int{topo.Nodes[r.IntN(len(topo.Nodes))].ID}
	if r.IntN(4) == 0 {
		near = append(near, topo.Nodes[r.IntN(len(topo.Nodes))].ID)
	}
	return near
}

func checkNear(t *testing.T, sc scenario, near []int) {
	t.Helper()
	plain, plainErr := Allocate(sc.topo, sc.st, sc.reserved, sc.req)
	req := sc.req
	req.Near = near
	got, err := Allocate(sc.topo, sc.st, sc.reserved, req)
	if (err == nil) != (plainErr == nil) || err != nil && err.Error() != plainErr.Error() {
		t.Fatalf("%+v near %v: %v, without devices %v (%s)", sc.req, near, err, plainErr, plain.CPUs)
	}
	if err != nil {
		return
	}
	checkNotOvercommitted(t, sc, got)
	if got.Unaligned != !isSubset(got.MemNodes, near) {
		t.Fatalf("%+v near %v: %s on %v, memory %v, unaligned %v", sc.req, near, got.CPUs, got.NUMANodes, got.MemNodes, got.Unaligned)
	}
	// The same request with every CPU elsewhere taken: when it fits so,
	// it fits on the devices' nodes, and must land there.
	onlyNear := sc.st
	var elsewhere []int
	for _, c := range sc.topo.CPUs {
		if !slices.Contains(near, c.NUMA) {
			elsewhere = append(elsewhere, c.ID)
		}
	}
	onlyNear.Exclusive = sc.st.Exclusive.Union(cpuset.New(elsewhere...))
	if _, err := Allocate(sc.topo, onlyNear, sc.reserved, sc.req); err == nil && got.Unaligned {
		t.Fatalf("%+v fits on the devices' nodes %v, but got %s on %v", sc.req, near, got.CPUs, got.NUMANodes)
	}
}

// checkNotOvercommitted: the count asked, no CPU held exclusively, reserved
// or isolated (unless asked), and no CPU's burst load beyond one CPU.
func checkNotOvercommitted(t *testing.T, sc scenario, res Result) {
	t.Helper()
	req, _ := sc.req.normalised()
	if res.CPUs.Size() != req.CPUs {
		t.Fatalf("%+v: got %d CPUs %s", req, res.CPUs.Size(), res.CPUs)
	}
	if both := sc.st.Exclusive.Overlap(res.CPUs); !both.IsEmpty() {
		t.Fatalf("%+v: %s already held exclusively", req, both)
	}
	if !req.UseReserved && (!res.CPUs.Intersection(sc.reserved).IsEmpty() || !res.CPUs.Intersection(sc.topo.Isolated).IsEmpty()) {
		t.Fatalf("%+v: %s takes reserved or isolated CPUs", req, res.CPUs)
	}
	after := sc.st.With(res, req)
	for _, id := range res.CPUs.UnsortedList() {
		if req.Policy != StaticBurst && sc.st.BurstMilli[id] > 0 || after.BurstMilli[id] > 1000 {
			t.Fatalf("%+v: cpu %d over-committed (burst load %d)", req, id, after.BurstMilli[id])
		}
	}
}

// BenchmarkAllocateNearNPS4Busy70 times the default policy's decisions of
// 1-16 CPUs next to a device on one of the eight nodes, on the states of
// BenchmarkAllocateNPS4Busy70: the price of the rings over a request
// without devices.
func BenchmarkAllocateNearNPS4Busy70(b *testing.B) {
	topo := fixture.MustBuild(fixture.AMDNPS4)
	states := busyStates(topo, 64)
	for _, near := range []bool{false, true} {
		name := map[bool]string{false: "without", true: "near"}[near]
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				req := Request{CPUs: 1 + i%16}
				if near {
					req.Near = []int{i % 8}
				}
				_, _ = Allocate(topo, states[i%len(states)], cpuset.New(), req)
			}
		})
	}
}

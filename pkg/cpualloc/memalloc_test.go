package cpualloc

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

const gib = uint64(1) << 30

// Small machines whose CPU ids a table can spell out. Two nodes: node 0
// holds cores 0-3 (CPUs 0-3, 8-11), node 1 cores 4-7 (CPUs 4-7, 12-15). Four
// nodes, two per socket: node n holds CPUs 2n, 2n+1, 2n+8, 2n+9.
var (
	memTwoNodes = fixture.Shape{Name: "mem-2n-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
		CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 64 * gib}
	memFourNodes = fixture.Shape{Name: "mem-4n-4c-ht", Sockets: 2, NUMAPerSocket: 2, L3PerNUMA: 1,
		CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 64 * gib}
)

// memCase is one row: a machine, its occupancy and free memory (nil: its
// Capacity without reserve), a request and the exact outcome.
type memCase struct {
	name      string
	shape     fixture.Shape
	exclusive string
	free      map[int]Memory
	req       Request
	want      string // CPU list; ignored when wantErr is set
	wantNodes []int
	wantMem   []int
	wantErr   string
	wantIs    error
}

func gibs(n uint64) Memory { return Memory{Bytes: n * gib} }

func runMemCases(t *testing.T, cases []memCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topo := fixture.MustBuild(tc.shape)
			free := tc.free
			if free == nil {
				free = Capacity(topo, Memory{})
			}
			st := State{Exclusive: BitsOf(mustParse(t, tc.exclusive)), Free: free}
			res, err := Allocate(topo, st, mustParse(t, ""), tc.req)
			if !checkOutcome(t, res, err, tc.wantErr, tc.wantIs, tc.want, tc.wantNodes) {
				return
			}
			if !slices.Equal(res.MemNodes, tc.wantMem) {
				t.Fatalf("mem nodes = %v, want %v", res.MemNodes, tc.wantMem)
			}
		})
	}
}

func TestAllocateMemoryTwoNodes(t *testing.T) {
	unequal := memTwoNodes
	unequal.Name, unequal.MemoryByNode = "mem-2n-unequal", map[int]uint64{0: 32 * gib, 1: 96 * gib}
	huge := memTwoNodes
	huge.Name = "mem-2n-hugepages-on-1"
	huge.HugePages = []fixture.NodeHugePages{{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 4, Free: 4}}}
	huge2M := memTwoNodes
	huge2M.Name = "mem-2n-2mi-pages-on-1"
	huge2M.HugePages = []fixture.NodeHugePages{{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 256, Free: 256}}}
	runMemCases(t, []memCase{
		{name: "no memory asked: the CPUs' node, as without memory", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(1), 1: gibs(1)}, req: Request{CPUs: 2},
			want: "0,8", wantNodes: []int{0}, wantMem: []int{0}},
		{name: "the node that holds the memory", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(10), 1: gibs(100)}, req: Request{CPUs: 2, Memory: gibs(48)},
			want: "4,12", wantNodes: []int{1}, wantMem: []int{1}},
		{name: "equal nodes but for memory: the most left behind", shape: unequal,
			req:  Request{CPUs: 2, Memory: gibs(1)},
			want: "4,12", wantNodes: []int{1}, wantMem: []int{1}},
		{name: "least-allocated too", shape: unequal,
			req:  Request{CPUs: 2, NUMAStrategy: LeastAllocated, Memory: gibs(1)},
			want: "4,12", wantNodes: []int{1}, wantMem: []int{1}},
		{name: "CPUs pack before memory: the fuller node still holds it", shape: unequal,
			exclusive: "0", req: Request{CPUs: 2, Memory: gibs(1)},
			want: "1,9", wantNodes: []int{0}, wantMem: []int{0}},
		{name: "node 0 almost full", shape: memTwoNodes, exclusive: "4-6,12-14",
			free: map[int]Memory{0: gibs(1), 1: gibs(60)}, req: Request{CPUs: 2, Memory: gibs(2)},
			want: "7,15", wantNodes: []int{1}, wantMem: []int{1}},
		{name: "no node holds it: spill over both, CPUs on one", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(30), 1: gibs(30)}, req: Request{CPUs: 2, Memory: gibs(48)},
			want: "0,8", wantNodes: []int{0}, wantMem: []int{0, 1}},
		{name: "the CPUs' node cannot hold it: memory spills to the other", shape: memTwoNodes,
			exclusive: "4-7,12-15", free: map[int]Memory{0: gibs(1), 1: gibs(100)},
			req:  Request{CPUs: 2, Memory: gibs(48)},
			want: "0,8", wantNodes: []int{0}, wantMem: []int{0, 1}},
		{name: "static-burst spills too", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(30), 1: gibs(30)}, req: Request{CPUs: 2, Policy: StaticBurst, Memory: gibs(48)},
			want: "0,8", wantNodes: []int{0}, wantMem: []int{0, 1}},
		{name: "distribute-across-numa stays on the node that holds it", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(10), 1: gibs(100)}, req: Request{CPUs: 4, Policy: DistributeAcrossNUMA, Memory: gibs(48)},
			want: "4-5,12-13", wantNodes: []int{1}, wantMem: []int{1}},
		{name: "distribute-across-numa over the two nodes the memory needs", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(30), 1: gibs(30)}, req: Request{CPUs: 4, Policy: DistributeAcrossNUMA, Memory: gibs(48)},
			want: "0,4,8,12", wantNodes: []int{0, 1}, wantMem: []int{0, 1}},
		{name: "spread-by-pcpus likewise", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(10), 1: gibs(100)}, req: Request{CPUs: 2, Policy: SpreadByPCPUs, Memory: gibs(48)},
			want: "4-5", wantNodes: []int{1}, wantMem: []int{1}},
		{name: "huge pages on one node only", shape: huge,
			req:  Request{CPUs: 2, Memory: Memory{Bytes: gib, HugePages1Gi: 2 * gib}},
			want: "4,12", wantNodes: []int{1}, wantMem: []int{1}},
		{name: "fits nowhere: memory", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(10), 1: gibs(20)}, req: Request{CPUs: 2, Memory: gibs(48)},
			wantErr: "memory: 48.0GiB asked; free per node: 0: 10.0GiB, 1: 20.0GiB", wantIs: ErrInsufficient},
		{name: "fits nowhere: huge pages", shape: huge,
			req:     Request{CPUs: 2, Memory: Memory{HugePages1Gi: 8 * gib}},
			wantErr: "hugepages-1Gi: 8.0GiB asked; free per node: 0: 0B, 1: 4.0GiB", wantIs: ErrInsufficient},
		{name: "memory fits, CPUs do not", shape: memTwoNodes, exclusive: "0-15",
			req:     Request{CPUs: 2, Memory: gibs(1)},
			wantErr: "full-pcpus: not enough free CPUs: requested=2, available=0", wantIs: ErrInsufficient},
		{name: "huge pages in part of a page", shape: huge,
			req:     Request{CPUs: 2, Memory: Memory{HugePages2Mi: 3 << 20}},
			wantErr: "memory.hugePages2Mi: 3145728 bytes is not a multiple of the 2Mi page (2097152 bytes)", wantIs: ErrInvalidRequest},
		{name: "fits nowhere: 2Mi pages", shape: huge2M,
			req:     Request{CPUs: 2, Memory: Memory{HugePages2Mi: gib}},
			wantErr: "hugepages-2Mi: 1.0GiB asked; free per node: 0: 0B, 1: 512.0MiB", wantIs: ErrInsufficient},
		{name: "1Gi pages in part of a page", shape: huge,
			req:     Request{CPUs: 2, Memory: Memory{HugePages1Gi: gib + 1}},
			wantErr: "memory.hugePages1Gi: 1073741825 bytes is not a multiple of the 1Gi page (1073741824 bytes)", wantIs: ErrInvalidRequest},
		{name: "free on a node the machine lacks", shape: memTwoNodes,
			free: map[int]Memory{0: gibs(1), 7: gibs(1)}, req: Request{CPUs: 2, Memory: gibs(1)},
			wantErr: "free: node 7 is not a NUMA node of the topology (nodes [0 1])", wantIs: ErrInvalidRequest},
	})
}

func TestAllocateMemoryFourNodes(t *testing.T) {
	tens := map[int]Memory{0: gibs(10), 1: gibs(10), 2: gibs(10), 3: gibs(10)}
	runMemCases(t, []memCase{
		{name: "one node holds it", shape: memFourNodes,
			free: map[int]Memory{0: gibs(10), 1: gibs(10), 2: gibs(10), 3: gibs(40)}, req: Request{CPUs: 2, Memory: gibs(16)},
			want: "6,14", wantNodes: []int{3}, wantMem: []int{3}},
		{name: "two nodes of one socket before two of two", shape: memFourNodes,
			free: tens, req: Request{CPUs: 2, Memory: gibs(16)},
			want: "0,8", wantNodes: []int{0}, wantMem: []int{0, 1}},
		{name: "the nearest node joins the CPUs' node", shape: memFourNodes,
			exclusive: "0-1,8-9,4-5,12-13", free: tens, req: Request{CPUs: 2, Memory: gibs(16)},
			want: "2,10", wantNodes: []int{1}, wantMem: []int{0, 1}},
		{name: "three nodes", shape: memFourNodes,
			free: tens, req: Request{CPUs: 2, Memory: gibs(25)},
			want: "0,8", wantNodes: []int{0}, wantMem: []int{0, 1, 2}},
		{name: "CPUs over two nodes that hold the memory between them", shape: memFourNodes,
			free: tens, req: Request{CPUs: 8, Memory: gibs(16)},
			want: "0-3,8-11", wantNodes: []int{0, 1}, wantMem: []int{0, 1}},
		{name: "distribute-across-numa over the group", shape: memFourNodes,
			free: map[int]Memory{0: gibs(10), 1: gibs(10), 2: gibs(40), 3: gibs(40)}, req: Request{CPUs: 4, Policy: DistributeAcrossNUMA, Memory: gibs(16)},
			want: "4-5,12-13", wantNodes: []int{2}, wantMem: []int{2}},
		{name: "fits nowhere", shape: memFourNodes,
			free: tens, req: Request{CPUs: 2, Memory: gibs(41)},
			wantErr: "memory: 41.0GiB asked; free per node: 0: 10.0GiB, 1: 10.0GiB, 2: 10.0GiB, 3: 10.0GiB", wantIs: ErrInsufficient},
	})
}

// TestAllocateBitsFree: the scheduler's State-less entry decides as Allocate
// does, with memory accounted and without.
func TestAllocateBitsFree(t *testing.T) {
	topo := fixture.MustBuild(memTwoNodes)
	a, err := NewAllocator(topo)
	if err != nil {
		t.Fatal(err)
	}
	taken := NewBits(0, 8)
	free := map[int]Memory{0: gibs(10), 1: gibs(100)}
	for _, req := range []Request{{CPUs: 2}, {CPUs: 2, Memory: gibs(48)}, {CPUs: 2, Memory: gibs(500)}} {
		want, wantErr := a.Allocate(State{Exclusive: taken, Free: free}, cpuset.New(), req)
		got, err := a.AllocateBitsFree(taken.w, nil, free, cpuset.New(), req)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%+v: AllocateBitsFree %+v, %v; Allocate %+v, %v", req, got, err, want, wantErr)
		}
		plain, _ := a.AllocateBits(taken.w, nil, cpuset.New(), req)
		if req.Memory.IsZero() && !reflect.DeepEqual(plain, got) {
			t.Fatalf("%+v: AllocateBits %+v, AllocateBitsFree %+v", req, plain, got)
		}
	}
}

package cpualloc

import (
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Fixture numbering (split siblings): AMDNPS4 core c is CPUs c and c+128, 8
// cores per L3 and 16 per node; AMDNPS1 has the same cores with one node per
// socket; Intel2S96C core c is CPUs c and c+96, 48 cores per node;
// MemoryOnly (adjacent siblings) core c is CPUs 2c and 2c+1, 8 cores per node.

func TestFullPCPUs(t *testing.T) {
	nps4, nps1 := fixture.AMDNPS4, fixture.AMDNPS1
	runCases(t, []allocCase{
		{name: "empty machine fills the first L3", shape: nps4, req: Request{CPUs: 4},
			want: "0-1,128-129", wantNodes: []int{0}},
		{name: "most-allocated packs into the fullest L3", shape: nps4, exclusive: "0-3,128-131",
			req: Request{CPUs: 4}, want: "4-5,132-133", wantNodes: []int{0}},
		{name: "least-allocated takes an empty L3 on the emptiest node", shape: nps4, exclusive: "0-3,128-131",
			req: Request{CPUs: 4, NUMAStrategy: LeastAllocated}, want: "16-17,144-145", wantNodes: []int{1}},
		{name: "most-allocated prefers the L3 on the fuller node among equals", shape: nps4,
			exclusive: "16-19,144-147", req: Request{CPUs: 16}, want: "24-31,152-159", wantNodes: []int{1}},
		{name: "most-allocated picks the fuller node when no L3 fits", shape: nps4, exclusive: "0-3,128-131",
			req: Request{CPUs: 20}, want: "4-5,8-15,132-133,136-143", wantNodes: []int{0}},
		{name: "least-allocated picks the emptier node", shape: nps4, exclusive: "0-3,128-131",
			req: Request{CPUs: 20, NUMAStrategy: LeastAllocated}, want: "16-25,144-153", wantNodes: []int{1}},
		{name: "fits one L3 of sixteen CPUs", shape: nps1, req: Request{CPUs: 16},
			want: "0-7,128-135", wantNodes: []int{0}},
		{name: "spills into the best-fitting second L3", shape: nps1, req: Request{CPUs: 18},
			want: "0-8,128-136", wantNodes: []int{0}},
		{name: "takes a whole L3 then the best-fitting hole", shape: nps1,
			exclusive: "2-7,10-15,130-135,138-143", req: Request{CPUs: 20},
			want: "0-1,16-23,128-129,144-151", wantNodes: []int{0}},
		{name: "spans two nodes when one is too small", shape: fixture.Intel2S96C, req: Request{CPUs: 100},
			want: "0-49,96-145", wantNodes: []int{0, 1}},
		{name: "memory-only node is never used", shape: fixture.MemoryOnly, req: Request{CPUs: 20},
			want: "0-19", wantNodes: []int{0, 1}},
		{name: "reserved CPUs are skipped", shape: nps4, reserved: "0-1,128-129", req: Request{CPUs: 4},
			want: "2-3,130-131", wantNodes: []int{0}},
		{name: "reserved CPUs on request", shape: nps4, reserved: "0-1,128-129",
			req: Request{CPUs: 4, UseReserved: true}, want: "0-1,128-129", wantNodes: []int{0}},
		{name: "isolated CPUs are skipped", shape: isolatedShape(nps4, "0-3,128-131"), req: Request{CPUs: 4},
			want: "4-5,132-133", wantNodes: []int{0}},
		{name: "isolated CPUs on request", shape: isolatedShape(nps4, "0-3,128-131"),
			req: Request{CPUs: 4, UseReserved: true}, want: "0-1,128-129", wantNodes: []int{0}},
		{name: "burst-loaded CPU breaks its core", shape: nps4, burst: map[int]int64{0: 100},
			req: Request{CPUs: 2}, want: "1,129", wantNodes: []int{0}},
		{name: "a core with an offline sibling is not whole", shape: offlineShape(fixture.Intel2S96C, "96"),
			req: Request{CPUs: 2}, want: "1,97", wantNodes: []int{0}},
		{name: "no SMT allows odd counts", shape: fixture.Small4, req: Request{CPUs: 3},
			want: "0-2", wantNodes: []int{0}},
		{name: "too few CPUs", shape: fixture.Small4, req: Request{CPUs: 5},
			wantErr: "full-pcpus: not enough free CPUs: requested=5, available=4", wantIs: ErrInsufficient},
		{name: "odd count on SMT", shape: fixture.Intel2S96C, req: Request{CPUs: 3, Policy: FullPCPUs},
			wantErr: "full-pcpus: requested 3 CPUs is not a multiple of 2 threads per core", wantIs: ErrInvalidRequest},
		{name: "enough threads but too few whole cores", shape: fixture.MemoryOnly,
			exclusive: "0,2,4,6,8,10,12,14,16,18,20,22,24", req: Request{CPUs: 8, Policy: FullPCPUs},
			wantErr: "full-pcpus: requested=8, free whole cores=3 (6 CPUs)", wantIs: ErrInsufficient},
	})
}

func TestSpreadByPCPUs(t *testing.T) {
	nps4 := fixture.AMDNPS4
	runCases(t, []allocCase{
		{name: "one thread per core", shape: nps4, req: Request{CPUs: 4, Policy: SpreadByPCPUs},
			want: "0-3", wantNodes: []int{0}},
		{name: "node with enough cores beats an L3 that would share siblings", shape: nps4,
			req: Request{CPUs: 10, Policy: SpreadByPCPUs}, want: "0-9", wantNodes: []int{0}},
		{name: "left-over threads before whole cores", shape: nps4, exclusive: "0",
			req: Request{CPUs: 4, Policy: SpreadByPCPUs}, want: "1-3,128", wantNodes: []int{0}},
		{name: "an L3 with left-overs beats a fuller one that would break cores", shape: nps4,
			exclusive: "0-5,128-133,8-9", req: Request{CPUs: 2, Policy: SpreadByPCPUs}, want: "136-137", wantNodes: []int{0}},
		{name: "a thread whose sibling is offline has its core to itself", shape: offlineShape(fixture.Intel2S96C, "96"),
			req: Request{CPUs: 2, Policy: SpreadByPCPUs}, want: "0-1", wantNodes: []int{0}},
		{name: "second threads only after every core has one", shape: fixture.MemoryOnly,
			req: Request{CPUs: 10, Policy: SpreadByPCPUs}, want: "0-4,6,8,10,12,14", wantNodes: []int{0}},
		{name: "spans nodes: one thread on every core of both first", shape: fixture.MemoryOnly,
			req: Request{CPUs: 18, Policy: SpreadByPCPUs}, want: "0-4,6,8,10,12,14,16,18,20,22,24,26,28,30", wantNodes: []int{0, 1}},
		{name: "too few CPUs", shape: fixture.Small4, exclusive: "0",
			req:     Request{CPUs: 4, Policy: SpreadByPCPUs},
			wantErr: "spread-by-pcpus: not enough free CPUs: requested=4, available=3", wantIs: ErrInsufficient},
	})
}

func TestDistributeAcrossNUMA(t *testing.T) {
	intel, nps4 := fixture.Intel2S96C, fixture.AMDNPS4
	d := func(n int) Request { return Request{CPUs: n, Policy: DistributeAcrossNUMA} }
	runCases(t, []allocCase{
		{name: "fits one node: stays there", shape: nps4, req: d(8), want: "0-3,128-131", wantNodes: []int{0}},
		{name: "even split over two nodes", shape: intel, req: d(100),
			want: "0-24,48-72,96-120,144-168", wantNodes: []int{0, 1}},
		{name: "nearest pair of nodes in one socket", shape: nps4, req: d(40),
			want: "0-9,16-25,128-137,144-153", wantNodes: []int{0, 1}},
		{name: "odd core count: the first node takes the extra core", shape: nps4, req: d(38),
			want: "0-9,16-24,128-137,144-152", wantNodes: []int{0, 1}},
		{name: "odd CPU count splits by CPU and breaks one core", shape: intel, req: d(101),
			want: "0-25,48-72,96-120,144-168", wantNodes: []int{0, 1}},
		{name: "odd count in one node breaks a core last", shape: intel, req: d(3),
			want: "0-1,96", wantNodes: []int{0}},
		{name: "odd remainder prefers a left-over thread", shape: intel, exclusive: "0", req: d(3),
			want: "1,96-97", wantNodes: []int{0}},
		{name: "least-allocated picks the emptier node", shape: nps4, exclusive: "0-3,128-131",
			req:  Request{CPUs: 4, Policy: DistributeAcrossNUMA, NUMAStrategy: LeastAllocated},
			want: "16-17,144-145", wantNodes: []int{1}},
		{name: "cannot split evenly", shape: fixture.MemoryOnly, exclusive: "2-15", req: d(18),
			wantErr: "distribute-across-numa: requested=18 cannot be split evenly over the NUMA nodes (free CPUs per node: 0=2 1=16)",
			wantIs:  ErrInsufficient},
		{name: "too few CPUs", shape: fixture.Small4, req: d(5),
			wantErr: "distribute-across-numa: not enough free CPUs: requested=5, available=4", wantIs: ErrInsufficient},
	})
}

func TestInvalidRequests(t *testing.T) {
	runCases(t, []allocCase{
		{name: "zero cpus", shape: fixture.Small4, req: Request{},
			wantErr: "cpus must be at least 1, got 0", wantIs: ErrInvalidRequest},
		{name: "negative cpus", shape: fixture.Small4, req: Request{CPUs: -2},
			wantErr: "cpus must be at least 1, got -2", wantIs: ErrInvalidRequest},
		{name: "unknown policy", shape: fixture.Small4, req: Request{CPUs: 1, Policy: "bogus"},
			wantErr: `unknown policy "bogus": want full-pcpus, full-pcpus-then-threads, spread-by-pcpus, distribute-across-numa or static-burst`,
			wantIs:  ErrInvalidRequest},
		{name: "unknown strategy", shape: fixture.Small4, req: Request{CPUs: 1, NUMAStrategy: "random"},
			wantErr: `unknown numa strategy "random": want most-allocated or least-allocated`, wantIs: ErrInvalidRequest},
		{name: "negative request", shape: fixture.Small4, req: Request{CPUs: 1, Policy: StaticBurst, RequestMilli: -1},
			wantErr: "requestMilli must not be negative, got -1", wantIs: ErrInvalidRequest},
		{name: "request above limit", shape: fixture.Small4, req: Request{CPUs: 1, Policy: StaticBurst, RequestMilli: 1500},
			wantErr: "static-burst: requestMilli=1500 exceeds the limit of 1 CPUs (1000 millicores)", wantIs: ErrInvalidRequest},
		{name: "negative burst load", shape: fixture.Small4, burst: map[int]int64{3: -5}, req: Request{CPUs: 1},
			wantErr: "state: cpu 3 has negative burst load -5"},
	})
}

package cpualloc

import (
	"maps"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestStaticBurst(t *testing.T) {
	intel, nps1 := fixture.Intel2S96C, fixture.AMDNPS1
	b := func(n int, milli int64) Request { return Request{CPUs: n, Policy: StaticBurst, RequestMilli: milli} }
	// intel: node 0 holds cores 0-47, core i's threads are i and i+96.
	runCases(t, []allocCase{
		{name: "empty machine: two whole cores, both threads of each", shape: intel, req: b(4, 1000),
			want: "0-1,96-97", wantNodes: []int{0}},
		{name: "fragments, then whole cores; beside and on burst load last", shape: intel, exclusive: "0",
			burst: map[int]int64{5: 500}, req: b(4, 1000), want: "1-2,96-97", wantNodes: []int{0}},
		{name: "a whole core before a thread beside another burst pod", shape: intel,
			burst: map[int]int64{5: 250, 101: 250}, req: b(2, 1000), want: "0,96", wantNodes: []int{0}},
		{name: "zero request means request equals limit", shape: intel,
			burst: map[int]int64{5: 1}, req: b(1, 0), want: "0", wantNodes: []int{0}},
		{name: "fragments anywhere in the node beat breaking a core inside one L3", shape: nps1,
			exclusive: "0-1,8-9", req: b(4, 2000), want: "128-129,136-137", wantNodes: []int{0}},
		{name: "no whole core or fragment left: the free thread beside the least loaded core", shape: intel,
			exclusive: "0-4,6,8-100,102,104-191", burst: map[int]int64{5: 600, 7: 200}, req: b(1, 200), want: "103", wantNodes: []int{0}},
		{name: "no SMT, every free CPU loaded: the least loaded first", shape: fixture.Small4,
			exclusive: "3", burst: map[int]int64{0: 600, 1: 200, 2: 400}, req: b(2, 400), want: "1-2", wantNodes: []int{0}},
		{name: "every CPU loaded: least loaded CPUs first", shape: fixture.Small4,
			burst: map[int]int64{0: 600, 1: 200, 2: 400, 3: 100}, req: b(2, 400), want: "1,3", wantNodes: []int{0}},
		{name: "exclusive CPUs are never shared", shape: fixture.Small4, exclusive: "0-2", req: b(1, 100),
			want: "3", wantNodes: []int{0}},
		{name: "never spans nodes: a request no node can hold is refused", shape: fixture.MemoryOnly, req: b(20, 4000),
			wantErr: "static-burst: not enough CPUs with room for 200 millicores each in one NUMA node: requested=20, available=32 (at most 16 on one node)",
			wantIs:  ErrInsufficient},
		{name: "isolated CPUs are skipped", shape: isolatedShape(fixture.Small4, "0-1"), req: b(2, 1000),
			want: "2-3", wantNodes: []int{0}},
		{name: "not enough room", shape: fixture.Small4, exclusive: "0-2", req: b(2, 0),
			wantErr: "static-burst: not enough CPUs with room for 1000 millicores each in one NUMA node: requested=2, available=1 (at most 1 on one node)",
			wantIs:  ErrInsufficient},
		{name: "loaded CPUs run out of room", shape: fixture.Small4,
			burst: map[int]int64{0: 800, 1: 800, 2: 800, 3: 800}, req: b(2, 500),
			wantErr: "static-burst: not enough CPUs with room for 250 millicores each in one NUMA node: requested=2, available=0 (at most 0 on one node)",
			wantIs:  ErrInsufficient},
	})
}

// Replicas of one Deployment (request 1, limit 4), placed one after the
// other on an idle node, share no CPU and no physical core while whole cores
// last: the seed's "avoids physical-core contention".
func TestStaticBurstReplicasDoNotStack(t *testing.T) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	owner := map[int]int{} // core -> replica
	for i, res := range goDemoReplicas(t, topo, 8) {
		for _, id := range res.CPUs.UnsortedList() {
			c, _ := topo.CPU(id)
			if o, ok := owner[c.Core]; ok && o != i {
				t.Fatalf("replica %d (%s) shares core %d with replica %d", i, res.CPUs, c.Core, o)
			}
			owner[c.Core] = i
		}
	}
}

// goDemoReplicas places n replicas of the seed's go-demo (request 1, limit 4)
// one after the other on an idle node, each seeing the ones before, and fails
// the test if one spans NUMA nodes.
func goDemoReplicas(t *testing.T, topo *topology.Topology, n int) []Result {
	t.Helper()
	req := Request{CPUs: 4, Policy: StaticBurst, RequestMilli: 1000}
	st := State{BurstMilli: map[int]int64{}}
	out := make([]Result, 0, n)
	for i := range n {
		res, err := Allocate(topo, st, cpuset.New(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NUMANodes) != 1 {
			t.Fatalf("replica %d on %s spans nodes %v", i, res.CPUs, res.NUMANodes)
		}
		st = st.With(res, req)
		out = append(out, res)
	}
	return out
}

func TestBurstShare(t *testing.T) {
	for _, tc := range []struct {
		milli int64
		cpus  int
		want  int64
	}{
		{1000, 3, 334}, {4000, 4, 1000}, {1, 4, 1}, {1000, 4, 250}, {0, 4, 0}, {500, 0, 0}, {-5, 2, 0},
	} {
		if got := BurstShare(tc.milli, tc.cpus); got != tc.want {
			t.Errorf("BurstShare(%d, %d) = %d, want %d", tc.milli, tc.cpus, got, tc.want)
		}
	}
}

func TestStateWithWithout(t *testing.T) {
	base := State{Exclusive: NewBits(1), BurstMilli: map[int]int64{4: 100}}
	excl := Request{CPUs: 2}
	burst := Request{CPUs: 3, Policy: StaticBurst, RequestMilli: 1000}
	for _, tc := range []struct {
		name      string
		res       Result
		req       Request
		wantExcl  cpuset.CPUSet
		wantBurst map[int]int64
	}{
		{"exclusive", Result{CPUs: cpuset.New(2, 3)}, excl, cpuset.New(1, 2, 3), map[int]int64{4: 100}},
		{"static-burst", Result{CPUs: cpuset.New(4, 5, 6)}, burst, cpuset.New(1), map[int]int64{4: 434, 5: 334, 6: 334}},
		{"static-burst at limit", Result{CPUs: cpuset.New(5, 6)}, Request{CPUs: 2, Policy: StaticBurst},
			cpuset.New(1), map[int]int64{4: 100, 5: 1000, 6: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			with := base.With(tc.res, tc.req)
			if !with.Exclusive.CPUSet().Equals(tc.wantExcl) || !maps.Equal(with.BurstMilli, tc.wantBurst) {
				t.Fatalf("With = %s %v, want %s %v", with.Exclusive, with.BurstMilli, tc.wantExcl, tc.wantBurst)
			}
			back := with.Without(tc.res, tc.req)
			if !back.Exclusive.CPUSet().Equals(base.Exclusive.CPUSet()) || !maps.Equal(back.BurstMilli, base.BurstMilli) {
				t.Fatalf("Without(With) = %s %v, want %s %v", back.Exclusive, back.BurstMilli, base.Exclusive, base.BurstMilli)
			}
			if !base.Exclusive.CPUSet().Equals(cpuset.New(1)) || !maps.Equal(base.BurstMilli, map[int]int64{4: 100}) {
				t.Fatalf("With changed its receiver: %s %v", base.Exclusive, base.BurstMilli)
			}
		})
	}
}

// Once every CPU carries burst load, a replica stacks on the node whose CPUs
// carry the least, so replicas spread evenly over the nodes (the real node's
// guest: two NUMA nodes of four CPUs, the seed's four go-demo replicas).
func TestStaticBurstStacksOnTheLeastLoadedNode(t *testing.T) {
	topo := fixture.MustBuild(fixture.Shape{Name: "2n-4c", Sockets: 1, NUMAPerSocket: 2, L3PerNUMA: 1,
		CoresPerSocket: 8, ThreadsPerCore: 1, Siblings: fixture.SiblingsSplit, MemoryPerNode: 2 << 30})
	for _, replicas := range []int{4, 6, 8} {
		held := map[int]int{}
		for _, res := range goDemoReplicas(t, topo, replicas) {
			for _, id := range res.CPUs.UnsortedList() {
				held[id]++
			}
		}
		most := (replicas*4 + 7) / 8
		for id, n := range held {
			if n > most {
				t.Errorf("%d replicas: cpu %d holds %d, want at most %d (%v)", replicas, id, n, most, held)
			}
		}
	}
}

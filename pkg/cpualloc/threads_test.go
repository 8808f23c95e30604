package cpualloc

import (
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// smt4 is one node of four cores with four threads each: core c is CPUs
// 4c..4c+3.
var smt4 = fixture.Shape{Name: "1s-4c-smt4", Sockets: 1, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 4, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 16 << 30}

func TestDefaultPolicy(t *testing.T) {
	intel, nps4, mem := fixture.Intel2S96C, fixture.AMDNPS4, fixture.MemoryOnly
	def := func(n int) Request { return Request{CPUs: n} }
	// nps4Others is every node but 0, whose cores 0-15 (CPUs 0-15 and
	// 128-143) form L3 groups of cores 0-7 and 8-15.
	const nps4Others = "16-127,144-255"
	runCases(t, []allocCase{
		{name: "even count is full-pcpus", shape: intel, req: def(4),
			want: "0-1,96-97", wantNodes: []int{0}, wantPolicy: FullPCPUs},
		{name: "one CPU takes a thread of the first core", shape: intel, req: def(1),
			want: "0", wantNodes: []int{0}, wantPolicy: FullPCPUsThenThreads},
		{name: "three CPUs: a whole core, then a thread of the next", shape: intel, req: def(3),
			want: "0-1,96", wantNodes: []int{0}, wantPolicy: FullPCPUsThenThreads},
		{name: "the policy can be named", shape: intel, req: Request{CPUs: 3, Policy: FullPCPUsThenThreads},
			want: "0-1,96", wantNodes: []int{0}, wantPolicy: FullPCPUsThenThreads},
		{name: "the remainder from a whole core, not beside another pod", shape: intel, exclusive: "0", req: def(3),
			want: "1-2,97", wantNodes: []int{0}},
		{name: "not beside burst load while a whole core is free", shape: intel,
			burst: map[int]int64{5: 100}, req: def(1), want: "0", wantNodes: []int{0}},
		{name: "a thread whose sibling is offline shares nothing", shape: offlineShape(intel, "96"), req: def(3),
			want: "0-1,97", wantNodes: []int{0}},
		{name: "not beside a reserved thread while a whole core is free", shape: intel, reserved: "0", req: def(1),
			want: "1", wantNodes: []int{0}},
		{name: "the fuller L3 group, breaking a core rather than sharing one", shape: nps4,
			exclusive: "0-5,128-133,8", req: def(3), want: "6-7,134", wantNodes: []int{0}},
		{name: "one L3 beats a left-over in another L3", shape: nps4,
			exclusive: "8-15,137-143", req: def(3), want: "0-1,128", wantNodes: []int{0}},
		{name: "node domain: the remainder from a whole core of an L3 group in use", shape: nps4,
			exclusive: nps4Others + ",2-7,130-135,10-15,139-143", req: def(7),
			want: "0-1,8-9,128-129,136", wantNodes: []int{0}},
		{name: "node domain: a left-over in an L3 group the whole cores use", shape: fixture.AMDNPS1,
			exclusive: "1-7,10-15,18-135,138-143,145-255", req: def(7),
			want: "8-9,16-17,136-137,144", wantNodes: []int{0}},
		{name: "least-allocated: the emptiest node", shape: nps4, exclusive: "0-3,128-131",
			req: Request{CPUs: 3, NUMAStrategy: LeastAllocated}, want: "16-17,144", wantNodes: []int{1}},
		{name: "spans two nodes when one lacks a core for the remainder", shape: mem, req: def(17),
			want: "0-16", wantNodes: []int{0, 1}},
		{name: "no SMT: any count is full-pcpus", shape: fixture.Small4, req: def(3),
			want: "0-2", wantNodes: []int{0}, wantPolicy: FullPCPUs},
		{name: "SMT4: the remainder from a whole core, not beside another pod", shape: smt4, exclusive: "4,8-9", req: def(6),
			want: "0-3,12-13", wantNodes: []int{0}},
		{name: "SMT4: the remainder stays on one core", shape: smt4, exclusive: "4-6,8-10", req: def(6),
			want: "0-3,12-13", wantNodes: []int{0}},
		{name: "even count without whole cores: threads of one node, not a refusal", shape: mem,
			exclusive: "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30", req: def(2),
			want: "1,3", wantNodes: []int{0}},
		{name: "even count: threads of one node beat whole cores of two", shape: mem,
			exclusive: "0,2,4,6,8,10,12,16,18,20,22,24,26,28", req: def(4),
			want: "1,3,14-15", wantNodes: []int{0}},
		{name: "without whole cores: left-over threads, near each other", shape: mem,
			exclusive: "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30", req: def(3),
			want: "1,3,5", wantNodes: []int{0}},
		{name: "fewer whole cores than wanted: all of them, then left-overs", shape: intel,
			exclusive: "4-95,99-191", reserved: "0,96", req: def(5),
			want: "1-3,97-98", wantNodes: []int{0}},
		{name: "one node without the whole cores beats two with them", shape: mem,
			exclusive: "0,2,4,6,8,10,12,14,18-31", req: def(3),
			want: "1,3,5", wantNodes: []int{0}},
		{name: "one L3 group of left-overs beats a node whose whole cores need a second", shape: nps4,
			exclusive: nps4Others + ",0-7,9-15,137-143", req: def(3),
			want: "128-130", wantNodes: []int{0}},
		{name: "too few CPUs", shape: mem, exclusive: "0-29", req: def(3),
			wantErr: "full-pcpus-then-threads: not enough free CPUs: requested=3, available=2", wantIs: ErrInsufficient},
	})
}

// For spread-by-pcpus and static-burst a single thread must not break a
// whole core while a left-over thread is free: on a machine with cores
// {1,97} and {2,98} whole and thread 3 alone, a one-CPU request takes 3, and
// a four-CPU full-pcpus request still fits. (The default instead keeps the
// thread off a core another pod uses; see TestDefaultPolicy.)
func TestLoneThreadKeepsWholeCores(t *testing.T) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	reserved := mustParse(t, "0,96")
	for _, p := range []Policy{SpreadByPCPUs, StaticBurst} {
		t.Run(string(p), func(t *testing.T) {
			st := State{Exclusive: BitsOf(mustParse(t, "4-95,99-191"))}
			req := Request{CPUs: 1, Policy: p}
			one, err := Allocate(topo, st, reserved, req)
			if err != nil || one.CPUs.String() != "3" {
				t.Fatalf("one CPU: %s, %v; want the lone thread 3", one.CPUs, err)
			}
			four, err := Allocate(topo, st.With(one, req), reserved, Request{CPUs: 4, Policy: FullPCPUs})
			if err != nil || four.CPUs.String() != "1-2,97-98" {
				t.Fatalf("full-pcpus after it: %s, %v", four.CPUs, err)
			}
		})
	}
}

// checkThenThreads: a full-pcpus-then-threads result takes whole cores first.
// Its domain is its L3 group when it lies in one, else its nodes. When the
// domain offers the aim (q whole cores and a core for the remainder), the
// result is q whole cores plus the remainder on one core, and it takes the
// remainder from a left-over (sharing a core with another pod) only when its
// L3 group had no whole core to spare. Otherwise it holds every whole core of the domain (up to
// q), and, if it lies in one node, no node offered the aim.
func l3Groups(topo *topology.Topology) map[struct{ node, l3 int }]bool {
	out := map[struct{ node, l3 int }]bool{}
	for _, c := range topo.CPUs {
		out[struct{ node, l3 int }{c.NUMA, c.L3}] = true
	}
	return out
}

func checkThenThreads(t testing.TB, sc scenario, o oracle, res Result) {
	t.Helper()
	cores := coresOf(sc.topo)
	type group struct{ node, l3 int }
	held, groups := map[int]int{}, map[group]bool{}
	for _, id := range res.CPUs.UnsortedList() {
		c, _ := sc.topo.CPU(id)
		held[c.Core]++
		groups[group{c.NUMA, c.L3}] = true
	}
	inDomain := func(c topology.CPU) bool {
		if len(groups) == 1 {
			return groups[group{c.NUMA, c.L3}]
		}
		return containsInt(res.NUMANodes, c.NUMA)
	}
	// offers counts the whole-core CPUs of the CPUs in and says whether they
	// offer the aim.
	offers := func(in func(topology.CPU) bool) (int, bool) {
		whole, leftover := 0, false
		for _, c := range sc.topo.CPUs {
			if in(c) {
				whole += boolTier(o.whole[c.Core])
				leftover = leftover || o.isLeftover(c.Core, cores[c.Core])
			}
		}
		return whole, whole >= o.bulk && (leftover || whole > o.bulk)
	}
	full, partial, broke, alone := 0, 0, false, true
	uniform := true
	for _, cpus := range cores {
		uniform = uniform && len(cpus) == o.width
	}
	for core, n := range held {
		if n == len(cores[core]) && (n == o.width || !uniform) {
			full++
			continue
		}
		partial++
		broke = broke || o.whole[core]
		for _, id := range cores[core] {
			alone = alone && (o.usable[id] || res.CPUs.Contains(id))
		}
	}
	if !uniform {
		// Single-thread cores (hybrid parts, offline siblings) make other
		// counts than q wide cores plus one right; the measures the
		// comparison with kubelet checks (bench/compare) judge those.
		return
	}
	whole, aim := offers(inDomain)
	if !aim {
		if want := min(o.bulk, whole) / o.width; full != want {
			t.Fatalf("%s holds %d whole cores, its domain had %d free: want %d", res.CPUs, full, whole/o.width, want)
		}
		// L3 groups rank before shared cores: only an L3 group that offered
		// the aim had to be preferred.
		for g := range l3Groups(sc.topo) {
			if _, ok := offers(func(c topology.CPU) bool { return group{c.NUMA, c.L3} == g }); ok && len(res.NUMANodes) == 1 {
				t.Fatalf("%s on node %v holds %d cores in part although L3 group %v had the whole cores",
					res.CPUs, res.NUMANodes, partial, g)
			}
		}
		return
	}
	if full != o.bulk/o.width || partial != 1 {
		t.Fatalf("%s holds %d whole and %d partial cores, want %d and 1", res.CPUs, full, partial, o.bulk/o.width)
	}
	if broke || alone || len(groups) > 1 {
		return
	}
	// The remainder came from a left-over: that shares a core with another
	// pod, which is right only when the L3 group lacked whole-core CPUs for
	// the whole request.
	wholeCPUs := 0
	for _, c := range sc.topo.CPUs {
		if _, in := groups[group{c.NUMA, c.L3}]; in && o.whole[c.Core] {
			wholeCPUs++
		}
	}
	if wholeCPUs >= sc.req.CPUs {
		t.Fatalf("%s shares a core although its L3 group had %d whole-core CPUs", res.CPUs, wholeCPUs)
	}
}

package cpualloc

import (
	"errors"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// On a hybrid part a single-thread efficiency core is a whole core: it
// shares nothing with anyone. fixture.Hybrid numbers its 8 two-thread cores
// 0-15 (core c is CPUs 2c, 2c+1) and its 16 single-thread cores 16-31.
func TestHybridCores(t *testing.T) {
	hybrid := fixture.Hybrid
	full := func(n int) Request { return Request{CPUs: n, Policy: FullPCPUs} }
	runCases(t, []allocCase{
		{name: "full-pcpus on single-thread cores when the others are taken", shape: hybrid,
			exclusive: "0-15", req: full(2), want: "16-17", wantNodes: []int{0}},
		{name: "full-pcpus, even count: two-thread cores first", shape: hybrid,
			req: full(4), want: "0-3", wantNodes: []int{0}},
		{name: "full-pcpus, odd count: a single-thread core makes it whole cores", shape: hybrid,
			req: full(3), want: "0-1,16", wantNodes: []int{0}},
		{name: "full-pcpus, odd count without a single-thread core free", shape: hybrid,
			exclusive: "16-31", req: full(3),
			wantErr: "full-pcpus: requested=3, free whole cores=8 (16 CPUs)", wantIs: ErrInsufficient},
		{name: "default, even count on single-thread cores", shape: hybrid,
			exclusive: "0-15", req: Request{CPUs: 2}, want: "16-17", wantNodes: []int{0}, wantPolicy: FullPCPUs},
		{name: "default, one CPU: a single-thread core, not beside another pod", shape: hybrid,
			exclusive: "0", req: Request{CPUs: 1}, want: "16", wantNodes: []int{0}},
		{name: "spread-by-pcpus, one CPU: a single-thread core, not beside another pod", shape: hybrid,
			exclusive: "0", req: Request{CPUs: 1, Policy: SpreadByPCPUs}, want: "16", wantNodes: []int{0}},
		{name: "spread-by-pcpus: single-thread cores, then left-overs, then two-thread cores", shape: hybrid,
			exclusive: "0,16-29", req: Request{CPUs: 4, Policy: SpreadByPCPUs}, want: "1-2,30-31", wantNodes: []int{0}},
		{name: "distribute-across-numa, one CPU: a single-thread core, not beside another pod", shape: hybrid,
			exclusive: "1,8-9,13,16-19,24,27-30", req: Request{CPUs: 1, Policy: DistributeAcrossNUMA},
			want: "20", wantNodes: []int{0}},
		{name: "distribute-across-numa, odd count: two-thread cores, then a single-thread one", shape: hybrid,
			exclusive: "1,8-9,13,16-19,24,27-30", req: Request{CPUs: 7, Policy: DistributeAcrossNUMA},
			want: "2-7,20", wantNodes: []int{0}},
	})
}

// A core whose sibling is offline stays a fragment: CPU ids with a gap mean
// some CPU is offline, so a short core is not taken for a hybrid part's.
func TestOfflineSiblingIsNotHybrid(t *testing.T) {
	runCases(t, []allocCase{
		{name: "full-pcpus skips a core with an offline sibling", shape: offlineShape(fixture.Intel2S96C, "96"),
			req: Request{CPUs: 2, Policy: FullPCPUs}, want: "1,97", wantNodes: []int{0}},
	})
}

// Cores of several widths that are not a hybrid part's single-thread cores
// (a core of 4 threads beside cores of 2, as a hostile report may give):
// full-pcpus never hands out fewer CPUs than asked when no sum of whole
// cores makes the count. It returned an empty set, with no error, before.
func TestFullPCPUsNeverFewerThanAsked(t *testing.T) {
	topo := &topology.Topology{Isolated: cpuset.New()}
	for id, core := range []int{0, 0, 0, 0, 1, 1, 2, 2} {
		topo.CPUs = append(topo.CPUs, topology.CPU{ID: id, Core: core, NUMA: 0, L3: 0})
	}
	topo.Nodes = []topology.NUMANode{{ID: 0, CPUs: topo.CPUSet(), MemoryTotal: gib, Distances: []int{10}}}
	for _, n := range []int{1, 3} {
		res, err := Allocate(topo, State{}, cpuset.New(), Request{CPUs: n, Policy: FullPCPUs})
		if !errors.Is(err, ErrInsufficient) || res.CPUs.Size() != 0 {
			t.Errorf("%d CPUs: %s, %v; want ErrInsufficient", n, res.CPUs, err)
		}
	}
	if res, err := Allocate(topo, State{}, cpuset.New(), Request{CPUs: 2, Policy: FullPCPUs}); err != nil || res.CPUs.Size() != 2 {
		t.Errorf("2 CPUs: %s, %v; want a 2-thread core", res.CPUs, err)
	}
}

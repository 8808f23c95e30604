package packing

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// tiny is 2 sockets x 2 cores x 2 threads: node 0 holds CPUs 0,1,4,5 and
// node 1 holds 2,3,6,7; CPU c and c+4 are siblings.
var tiny = fixture.MustBuild(fixture.Shape{Name: "tiny", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 2, ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit})

// firstFit hands out the lowest-numbered free CPUs, blind to topology.
type firstFit struct {
	free  cpuset.CPUSet
	pods  map[int]cpuset.CPUSet
	reuse bool // hand out CPU 0 every time: a broken allocator
}

func newFirstFit(t *topology.Topology) *firstFit {
	return &firstFit{free: t.CPUSet(), pods: map[int]cpuset.CPUSet{}}
}

func (f *firstFit) Name() string        { return "first-fit" }
func (f *firstFit) WholeCores(int) bool { return false }
func (f *firstFit) Free() cpuset.CPUSet { return f.free }

func (f *firstFit) Allocate(id, n int) (cpuset.CPUSet, error) {
	if f.free.Size() < n {
		return cpuset.New(), errors.New("full")
	}
	got := cpuset.New(f.free.List()[:n]...)
	if !f.reuse {
		f.free = f.free.Difference(got)
	}
	f.pods[id] = got
	return got, nil
}

func (f *firstFit) Release(id int) error {
	f.free = f.free.Union(f.pods[id])
	delete(f.pods, id)
	return nil
}

func arrive(pod, cpus int) Event { return Event{Pod: pod, CPUs: cpus, Arrive: true} }
func leave(pod int) Event        { return Event{Pod: pod} }

func TestRunCountsPlacementAgainstRoom(t *testing.T) {
	events := []Event{
		arrive(0, 1), // {0}: one node, room everywhere
		arrive(1, 4), // {1,2,3,4}: two nodes while node 1 had 2,3,6,7 free -> a miss; 4 is 0's sibling
		arrive(2, 4), // 3 CPUs left: rejected, did not fit
		leave(0),
		arrive(3, 2), // {0,5}: node 0, which had room; both siblings (4 and 1) are pod 1's
		leave(9),     // never admitted: ignored
	}
	res, err := Run(tiny, newFirstFit(tiny), events)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Allocator: "first-fit", Admitted: 3, Rejected: 1, CPUsAdmitted: 7, CPUsRequested: 11,
		Room: [domains]int{3, 3, 3}, Inside: [domains]int{2, 2, 2}, CoreShared: 2, MissCount: 1}
	res.Latencies = nil
	misses := res.Misses
	res.Misses = nil
	if !equalResult(res, want) {
		t.Fatalf("got %+v\nwant %+v", res, want)
	}
	if len(misses) != 1 || misses[0].Pod != 1 || !misses[0].Got.Equals(cpuset.New(1, 2, 3, 4)) ||
		!misses[0].Free.Equals(cpuset.New(1, 2, 3, 4, 5, 6, 7)) || !misses[0].Taken.Equals(cpuset.New(0)) || misses[0].Nodes != 2 {
		t.Fatalf("misses %+v", misses)
	}
}

func equalResult(a, b Result) bool {
	return a.Allocator == b.Allocator && a.Admitted == b.Admitted && a.Rejected == b.Rejected &&
		a.RejectedFree == b.RejectedFree && a.CPUsAdmitted == b.CPUsAdmitted &&
		a.CPUsRequested == b.CPUsRequested && a.Room == b.Room && a.Inside == b.Inside &&
		a.CoreShared == b.CoreShared && a.MissCount == b.MissCount
}

func TestRunCatchesABrokenAllocator(t *testing.T) {
	f := newFirstFit(tiny)
	f.reuse = true
	_, err := Run(tiny, f, []Event{arrive(0, 1), arrive(1, 1)})
	if err == nil || !strings.Contains(err.Error(), "pod 1") {
		t.Fatalf("handing CPU 0 out twice went unnoticed: %v", err)
	}
}

type refuser struct{ firstFit }

func (r *refuser) Allocate(int, int) (cpuset.CPUSet, error) { return cpuset.New(), errors.New("no") }

func TestRunCountsRejectionsWithCPUsFree(t *testing.T) {
	r := &refuser{*newFirstFit(tiny)}
	r.free = cpuset.New(0, 4, 1) // one whole core and a lone thread
	res, err := Run(tiny, r, []Event{arrive(0, 3), arrive(1, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != 2 || res.RejectedFree != 1 {
		t.Fatalf("rejected %d (%d with enough free), want 2 (1)", res.Rejected, res.RejectedFree)
	}
}

func TestGeometry(t *testing.T) {
	g := newGeometry(tiny)
	free := cpuset.New(0, 4, 1, 2, 3, 6)
	if got := g.usable(free, true); !got.Equals(cpuset.New(0, 4, 2, 6)) {
		t.Errorf("whole-core usable %s", got)
	}
	if got := g.usable(free, false); !got.Equals(free) {
		t.Errorf("usable %s", got)
	}
	for _, tc := range []struct {
		n    int
		want bool
	}{{3, true}, {4, false}} {
		if got := g.room(free, NUMA, tc.n); got != tc.want {
			t.Errorf("room for %d: %v", tc.n, got)
		}
	}
	if got := g.span(cpuset.New(0, 1, 2), Socket); got != 2 {
		t.Errorf("span %d", got)
	}
	if !g.sharesCore(cpuset.New(1), cpuset.New(2)) || g.sharesCore(cpuset.New(1), cpuset.New(5)) {
		t.Error("core sharing misjudged")
	}
}

func TestLatencyStatsAndTable(t *testing.T) {
	r := Result{Allocator: "x", Latencies: []time.Duration{4, 1, 3, 2, 100}, Room: [domains]int{4}, Inside: [domains]int{3}}
	if r.MeanLatency() != 22 || r.Percentile(50) != 3 || r.Percentile(100) != 100 {
		t.Fatalf("mean %d p50 %d p100 %d", r.MeanLatency(), r.Percentile(50), r.Percentile(100))
	}
	var b bytes.Buffer
	if err := WriteTable(&b, []Result{r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "75.0 % of 4") || !strings.Contains(b.String(), "100.0 % of 0") {
		t.Fatalf("table:\n%s", b.String())
	}
}

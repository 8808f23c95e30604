package core

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// What the state keeps of a decision gives back the holding it was made
// from, compares as the assignment did, and has no word past its highest
// CPU.
func TestKeptDecisionIsTheHolding(t *testing.T) {
	for _, a := range []workload.Assignment{
		{CPUs: cpuset.New(), Policy: cpualloc.FullPCPUs},
		{CPUs: cpuset.New(3), Policy: cpualloc.FullPCPUs},
		{CPUs: cpuset.New(0, 63, 64, 191), Policy: cpualloc.FullPCPUsThenThreads},
		{CPUs: cpuset.New(4, 5), Policy: cpualloc.StaticBurst, RequestMilli: 1500},
		{CPUs: cpuset.New(8191), Policy: "not-a-policy"},
	} {
		d := decisionOf(&a, nil)
		if got := d.holding(); !got.CPUs.Equals(a.CPUs) || got.Policy != a.Policy || got.RequestMilli != a.RequestMilli {
			t.Errorf("%v kept gives back %v", a, got)
		}
		if !d.sameAs(&a) || !d.sameHolding(a) {
			t.Errorf("%v kept is not the same as itself", a)
		}
		if top := a.CPUs.List(); len(top) > 0 && len(d.cpus) != top[len(top)-1]/64+1 {
			t.Errorf("%v kept in %d words, want %d", a, len(d.cpus), top[len(top)-1]/64+1)
		}
		other := a
		other.CPUs = a.CPUs.Union(cpuset.New(100))
		if d.sameAs(&other) || d.sameHolding(other) {
			t.Errorf("%v kept is the same as %v", a, other)
		}
		if a.Policy == cpualloc.StaticBurst {
			other = a
			other.RequestMilli++
			if d.sameHolding(other) {
				t.Errorf("%v kept holds what %v does", a, other)
			}
		}
	}
	if d := decisionOf(nil, nil); d != nil || !d.sameAs(nil) || d.sameAs(&workload.Assignment{}) {
		t.Errorf("no decision kept as %v", d)
	}
}

// A bound pod's decision is kept as bits, not as the parsed assignment
// with its CPU set: the heap the state holds for a thousand pinned pods of
// sixteen CPUs, less the same pods without a decision, is under 200 bytes
// a pod (about 140: the kept decision and the node's index of it); the
// assignment and its set were about 940.
func TestDecisionsKeptSmall(t *testing.T) {
	const pods = 1000
	held := func(decided bool) uint64 {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		c := NewCluster()
		for i := range pods {
			var d *workload.Assignment
			if decided {
				d = &workload.Assignment{CPUs: cpuset.New(16+i%8*16, 17+i%8*16, 18+i%8*16, 19+i%8*16, 20+i%8*16, 21+i%8*16, 22+i%8*16,
					23+i%8*16, 24+i%8*16, 25+i%8*16, 26+i%8*16, 27+i%8*16, 28+i%8*16, 29+i%8*16, 30+i%8*16, 31+i%8*16),
					Policy: cpualloc.FullPCPUs}
			}
			c.SetPod(fmt.Sprintf("ns/p%d", i), fmt.Sprintf("n%d", i%10), d)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(c)
		return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	}
	// Another test's goroutines ending during a reading make it smaller:
	// a pass of five readings is enough, a decision kept whole fails all.
	var per int64
	var plain, decided uint64
	for range 5 {
		plain, decided = held(false), held(true)
		if per = (int64(decided) - int64(plain)) / pods; per <= 200 {
			return
		}
	}
	t.Fatalf("a pinned pod's decision keeps %d bytes (%d with decisions, %d without, %d pods), want at most 200", per, decided, plain, pods)
}

// Every bound pod is an entry of the state, most with no decision: an
// entry is its node and a pointer to what its decision holds, memory
// included, not the memory held beside them (it was 48 bytes).
func TestBoundPodSmall(t *testing.T) {
	if size := unsafe.Sizeof(boundPod{}); size > 24 {
		t.Fatalf("a bound pod's entry takes %d bytes, want at most 24", size)
	}
}

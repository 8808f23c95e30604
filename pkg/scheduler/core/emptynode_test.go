package core

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// bigNode is the scale run's machine: two sockets of 48 two-thread cores,
// 192 CPUs, its first core reserved.
var (
	bigNode         = fixture.Intel2S96C
	bigNodeReserved = cpuset.New(0, bigNode.TotalCores())
)

// emptyNodeLimit is what a node that holds nothing may keep in the
// cluster state, its snapshot's slot and its view included, on a
// 192-CPU two-socket machine: most nodes of a large cluster hold nothing,
// and at 5000 nodes each 100 bytes is half a megabyte. It was 1171 bytes
// with a tally kept for every node, 739 with an empty holdings map on
// every report and the first snapshot's set of changed nodes kept; 630
// without them.
const emptyNodeLimit = 700

// What an empty node costs the cluster state, measured on the heap: a
// thousand nodes with their reports, a snapshot taken, less the same
// cluster before any report.
func TestEmptyNodeSmall(t *testing.T) {
	const nodes = 1000
	objs := make([]*nrt.Object, nodes)
	for i := range objs {
		objs[i] = publish(t, bigNode, fmt.Sprintf("node-%04d", i), bigNodeReserved, nil)
	}
	names := make([]string, nodes)
	for i, o := range objs {
		names[i] = o.Metadata.Name
	}
	held := func() int64 {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		c := NewCluster()
		for i, o := range objs {
			c.SetNodeCPUs(names[i], int64(bigNode.TotalCores()*bigNode.ThreadsPerCore))
			c.SetNRT(names[i], o)
		}
		c.Snapshot()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(c)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	// Another test's goroutines ending during a reading make it smaller:
	// the least of five readings.
	per := held() / nodes
	for range 4 {
		per = min(per, held()/nodes)
	}
	if per > emptyNodeLimit {
		t.Fatalf("an empty node keeps %d bytes of the cluster state, want at most %d", per, emptyNodeLimit)
	}
	t.Logf("an empty node keeps %d bytes", per)
}

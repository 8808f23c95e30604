package workload

import (
	"slices"
	"strconv"
	"testing"

	"github.com/locus-project/locus/pkg/fuzzseed"
	"github.com/locus-project/locus/pkg/topology"
)

// The scheduler's decision annotation is pod text: anyone who may create a
// pod writes it, and the scheduler and every node agent read it.
func FuzzParseResourceStatus(f *testing.F) {
	f.Add(`{"cpuset": "0-3", "numaNodes": [0], "policy": "full-pcpus"}`)
	f.Add(`{"cpuset": "0-3", "numaNodes": [1023, 1024], "extra": {}}`)
	fuzzseed.Add(f, func(s string) string { return `{"cpuset": ` + strconv.Quote(s) + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"cpuset": "0", "numaNodes": ` + s + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"cpuset": "0", "policy": ` + strconv.Quote(s) + `}` })
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var rs ResourceStatus
		var err error
		fuzzseed.Timed(t, "ParseResourceStatus", func() { rs, err = ParseResourceStatus(raw) })
		fuzzseed.CheckError(t, err, "cpuset", "numaNodes", "policy", "JSON")
		if err != nil {
			return
		}
		if rs.CPUs.Size() == 0 || rs.CPUs.List()[rs.CPUs.Size()-1] > topology.MaxCPUID {
			t.Fatalf("accepted cpuset %v", rs.CPUs)
		}
		for _, n := range rs.NUMANodes {
			if n < 0 || n > topology.MaxNodeID {
				t.Fatalf("accepted node %d", n)
			}
		}
		again, err := ParseResourceStatus(rs.Format())
		if err != nil || !again.CPUs.Equals(rs.CPUs) || !slices.Equal(again.NUMANodes, rs.NUMANodes) || again.Policy != rs.Policy {
			t.Fatalf("%+v writes %s, which reads back as %+v, %v", rs, rs.Format(), again, err)
		}
	})
}

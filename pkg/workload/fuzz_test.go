package workload

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

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

// resource-qos-config's nodeStrategies are ConfigMap text that every node
// agent reads; the entry in force depends on the node's labels.
func FuzzConfigFromQoSOnNode(f *testing.F) {
	f.Add(`{"clusterStrategy": {"beClass": {"memoryQOS": {"enable": true}}}, "nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": {"throttlingPercent": 50}}}]}`)
	f.Add(`{"nodeStrategies": [{"name": "x", "nodeSelector": {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["a"]}]}, "lsClass": {"memoryLocality": {"policy": "none"}}}]}`)
	f.Add("nodeStrategies:\n- nodeSelector: {matchLabels: {pool: big}}\n  beClass: {memoryQOS: {enable: true}}\n")
	f.Add(`{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": ` + strings.Repeat(`{"a":`, 100) + strings.Repeat(`}`, 100) + `}]}`)
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string {
		return `{"nodeStrategies": [{"nodeSelector": {"matchLabels": {"pool": "big"}}, "beClass": {"memoryQOS": ` + s + `}}]}`
	})
	fuzzseed.Add(f, func(s string) string { return `{"nodeStrategies": ` + s + `}` })
	f.Fuzz(func(t *testing.T, raw string) {
		var cfg *Config
		var err error
		fuzzseed.Timed(t, "ConfigFromQoSOnNode", func() { cfg, err = ConfigFromQoSOnNode(raw, map[string]string{"pool": "big"}) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		// Accepted on one node is accepted on every node: each entry is
		// checked whichever selects the node.
		if _, err := ConfigFromQoSOnNode(raw, nil); err != nil {
			t.Fatalf("accepted with labels, refused without: %v", err)
		}
		if n := cfg.NodeStrategy; len(n) > 63+len("nodeStrategies[]")+2 {
			t.Fatalf("entry name in force %q is not bounded", n)
		}
	})
}

// The scheduler's partition annotation is pod text too, read by every node
// agent beside the decision.
func FuzzParseContainerCPUSets(f *testing.F) {
	f.Add(`{"app": "0-1", "log": "2"}`)
	f.Add(`{"a": "0", "a": "1"}`)
	fuzzseed.Add(f, func(s string) string { return `{"app": ` + strconv.Quote(s) + `}` })
	fuzzseed.Add(f, func(s string) string { return `{` + strconv.Quote(s) + `: "0"}` })
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var parts map[string]cpuset.CPUSet
		var err error
		// The pod of the cap's test: the largest decision, an app
		// container, a sidecar and three init containers.
		b := capPod.budget()
		fuzzseed.Timed(t, "ParseContainerCPUSets", func() { parts, err = ParseContainerCPUSets(raw, b) })
		fuzzseed.CheckError(t, err, "container", "JSON", "bytes")
		if err != nil {
			return
		}
		total := 0
		for name, p := range parts {
			if !b.Containers[name] || p.IsEmpty() || !p.IsSubsetOf(b.Decided) {
				t.Fatalf("accepted %q: %v", name, p)
			}
			total += p.Size()
		}
		if total > b.total || total > maxPartsCPUs {
			t.Fatalf("accepted %d CPUs in all, over the budget of %d", total, b.total)
		}
		again, err := ParseContainerCPUSets(FormatContainerCPUSets(parts), b)
		if err != nil || !SameContainerCPUSets(again, parts) {
			t.Fatalf("%v writes %s, which reads back as %v, %v", parts, FormatContainerCPUSets(parts), again, err)
		}
	})
}

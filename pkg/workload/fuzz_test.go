package workload

import (
	"slices"
	"strconv"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/memqos"
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

// A pod's memory QoS text: its class labels and memoryQOS annotations, of
// both generations, as whoever may create a pod writes them.
func FuzzMemQoSOf(f *testing.F) {
	f.Add("LS", "", `{"policy": "auto"}`, `{"policy": "none"}`)
	f.Add("", "be", "", `{"policy": "NONE", "lowLimitPercent": 5}`)
	f.Add("gold", "", `{policy: default, throttlingPercent: 80}`, "")
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add(s, "", s, "")
		f.Add("", s, `{"policy": `+strconv.Quote(s)+`}`, s)
	}
	f.Fuzz(func(t *testing.T, label, legacyLabel, ann, legacyAnn string) {
		labels := map[string]string{LabelQoSClass: label, LegacyQoSClass: legacyLabel}
		anns := map[string]string{}
		if ann != "" {
			anns[AnnotationMemoryQoS] = ann
		}
		if legacyAnn != "" {
			anns[LegacyAnnotationMemoryQoS] = legacyAnn
		}
		var err error
		var w memqos.Workload
		fuzzseed.Timed(t, "MemQoSOf", func() { w, err = MemQoSOf("ns", labels, anns, memqos.Burstable, nil) })
		fuzzseed.CheckError(t, err, "annotation", "label")
		if err != nil {
			return
		}
		switch w.Class {
		case memqos.ClassLSE, memqos.ClassLSR, memqos.ClassLS, memqos.ClassBE, memqos.ClassSystem:
		default:
			t.Fatalf("accepted class %q", w.Class)
		}
		if (w.PodKey == "") != (ann == "" && legacyAnn == "") {
			t.Fatalf("annotation read from %q", w.PodKey)
		}
		if _, err := memqos.Compute(memqos.Config{}, memqos.NamespaceConfig{}, w, memqos.Options{}); err != nil {
			t.Fatalf("text read, yet the decision refuses it: %v", err)
		}
	})
}

// FuzzMovableOf: locus.io/movable is pod text; only "true" and "false" are
// values, and anything else is an error naming the annotation.
func FuzzMovableOf(f *testing.F) {
	f.Add("true")
	f.Add("false")
	for _, s := range fuzzseed.Texts() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var m bool
		var err error
		fuzzseed.Timed(t, "MovableOf", func() { m, err = MovableOf(map[string]string{AnnotationMovable: raw}) })
		fuzzseed.CheckError(t, err, "annotation")
		if (err == nil) != (raw == "true" || raw == "false") || m != (raw == "true") {
			t.Fatalf("%q: movable %v, error %v", raw, m, err)
		}
	})
}

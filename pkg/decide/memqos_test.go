package decide

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// TestMemQoSTextReadOnArrival: the decision takes the memoryQOS annotation
// typed, as the workload's text was read when it arrived; text that could
// not be read is a problem naming the annotation and the value, and no
// memory QoS file of the workload is written or restored.
func TestMemQoSTextReadOnArrival(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	good := testWorkload("good", 0, false, false, map[string]string{workload.AnnotationMemoryQoS: `{"policy": "auto", "lowLimitPercent": 50}`})
	bad := testWorkload("bad", 0, false, false, map[string]string{workload.AnnotationMemoryQoS: `{"policy": "on"}`})
	if good.MemQoSInvalid != "" || bad.MemQoSInvalid == "" {
		t.Fatalf("read on arrival: %q, %q", good.MemQoSInvalid, bad.MemQoSInvalid)
	}
	d := Compute(Input{Topology: topo, Workloads: []workload.Workload{good, bad}})
	if len(d.Problems) != 1 || d.Problems[0].Workload != "bad" || d.Problems[0].Reason != "InvalidMemoryQOS" ||
		d.Problems[0].Message != `annotation koordinator.sh/memoryQOS: policy: "on" is not one of auto, default, none` {
		t.Fatalf("problems %+v", d.Problems)
	}
	if v, ok := opValue(d.Ops, "locus.slice/good", "memory.low"); !ok || v != "52428800" {
		t.Errorf("good: memory.low %q, %v", v, ok)
	}
	for _, op := range d.Ops {
		if op.Cgroup == "locus.slice/bad" && strings.HasPrefix(string(op.Knob), "memory.") {
			t.Errorf("bad: %s written", op.Knob)
		}
	}
	for _, r := range d.Restores {
		if r.Cgroup == "locus.slice/bad" && strings.HasPrefix(string(r.Knob), "memory.") {
			t.Errorf("bad: %s restored", r.Knob)
		}
	}
}

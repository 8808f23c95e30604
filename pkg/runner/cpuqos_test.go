package runner

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/state"
)

// TestPlanRunCPUQoS: a BE run yields (cpu.idle 1, or cpu.shares 2 where the
// kernel has no cpu.idle), an LS run keeps its weight, --cpu-qos none
// writes nothing.
func TestPlanRunCPUQoS(t *testing.T) {
	for _, tc := range []struct {
		qos          memqos.Class
		on, idle     bool
		wantIdle     string
		wantShares   string
		describeWith string
	}{
		{"BE", true, true, "1", "", "cpu.idle 1"},
		{"BE", true, false, "", "2", "lowest weight"},
		{"LS", true, true, "", "", "keeps its weight"},
		{"BE", false, true, "", "", ""},
	} {
		h := host("", "")
		h.CPUIdle = tc.idle
		d, err := PlanRun(h, state.Empty(), Request{QoS: tc.qos, CPUQoS: tc.on}, "p/r")
		if err != nil {
			t.Fatal(err)
		}
		idle, _ := op(d, cgroup.CPUIdle)
		shares, _ := op(d, cgroup.CPUShares)
		if idle != tc.wantIdle || shares != tc.wantShares {
			t.Errorf("%+v: cpu.idle %q cpu.shares %q, want %q %q", tc, idle, shares, tc.wantIdle, tc.wantShares)
		}
		if got := d.Describe(); tc.describeWith != "" && !strings.Contains(got, tc.describeWith) || tc.describeWith == "" && strings.Contains(got, "CPU QoS") {
			t.Errorf("%+v: Describe:\n%s", tc, got)
		}
	}
}

package workload

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/hostconfig"
)

// TestCPUQoSText: the class and the core isolation annotation as pods and
// HostConfig entries give them; bad text is an error naming it.
func TestCPUQoSText(t *testing.T) {
	for _, tc := range []struct {
		doc, class string
		core       string // "", "true", "false"
		invalid    string
	}{
		{doc: "{name: a, cgroup: x}", class: "BE"}, // no resources: BestEffort
		{doc: "{name: a, cgroup: x, resources: {requests: {cpu: 1}}}", class: "LS"},
		{doc: "{name: a, cgroup: x, resources: {limits: {cpu: 1, memory: 1Gi}}}", class: "LS"}, // Guaranteed
		{doc: "{name: a, cgroup: x, qosClass: lsr}", class: "LSR"},
		{doc: "{name: a, cgroup: x, labels: {koordinator.sh/qosClass: Be}, resources: {requests: {cpu: 1}}}", class: "BE"},
		{doc: `{name: a, cgroup: x, qosClass: LS, annotations: {locus.io/core-isolation: " True "}}`, class: "LS", core: "true"},
		{doc: `{name: a, cgroup: x, qosClass: LS, annotations: {locus.io/core-isolation: "false"}}`, class: "LS", core: "false"},
		{doc: `{name: a, cgroup: x, qosClass: LS, annotations: {locus.io/core-isolation: "yes"}}`,
			invalid: `annotation locus.io/core-isolation: "yes" is not true or false`},
		{doc: "{name: a, cgroup: x, labels: {koordinator.sh/qosClass: GOLD}}",
			invalid: `label koordinator.sh/qosClass: "GOLD" is not one of LSE, LSR, LS, BE, SYSTEM`},
	} {
		hc, err := hostconfig.Parse([]byte("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- " + tc.doc + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		w := FromHostConfig(hc.Workloads[0], "x").Plan
		if tc.invalid != "" {
			if !strings.Contains(w.CPUQoSInvalid, tc.invalid) {
				t.Errorf("%s: invalid %q, want %q", tc.doc, w.CPUQoSInvalid, tc.invalid)
			}
			continue
		}
		core := ""
		if c := w.CPUQoS.CoreIsolation; c != nil {
			core = map[bool]string{true: "true", false: "false"}[*c]
		}
		if w.CPUQoSInvalid != "" || w.CPUQoS.Class != tc.class || core != tc.core {
			t.Errorf("%s: class %q core %q invalid %q; want class %q core %q", tc.doc, w.CPUQoS.Class, core, w.CPUQoSInvalid, tc.class, tc.core)
		}
	}
}

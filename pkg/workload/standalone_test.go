package workload

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/memqos"
)

func TestFromHostConfig(t *testing.T) {
	tests := []struct {
		name, doc  string
		excl       bool
		cpus       int
		policy     string
		reqMilli   int64
		kube       memqos.KubeQoS
		class      string
		be         bool
		problem    string
		message    string
		limitBytes int64
	}{
		{name: "shared", doc: "{name: a, cgroup: x}", kube: memqos.BestEffort},
		{name: "exclusive", doc: `{name: a, cgroup: x, resources: {limits: {cpu: 2}}, annotations: {cpuset-scheduler: "True"}}`,
			excl: true, cpus: 2, kube: memqos.Burstable},
		{name: "static burst", doc: `{name: a, cgroup: x, resources: {requests: {cpu: 500m}, limits: {cpu: 2}}, annotations: {cpuset-scheduler: "true", cpu-policy: static-burst}}`,
			excl: true, cpus: 2, policy: "static-burst", reqMilli: 500, kube: memqos.Burstable},
		{name: "request counts only for static-burst", doc: `{name: a, cgroup: x, resources: {requests: {cpu: 500m}, limits: {cpu: 2}}, annotations: {cpuset-scheduler: "true", cpu-policy: full-pcpus}}`,
			excl: true, cpus: 2, policy: "full-pcpus", kube: memqos.Burstable},
		{name: "fractional limit", doc: `{name: a, cgroup: x, resources: {limits: {cpu: 1500m}}, annotations: {cpuset-scheduler: "true"}}`,
			kube: memqos.Burstable, problem: "InvalidCPULimit", message: "got 1500m"},
		{name: "bad policy", doc: `{name: a, cgroup: x, resources: {limits: {cpu: 1}}, annotations: {cpuset-scheduler: "true", cpu-policy: fast}}`,
			excl: true, cpus: 1, kube: memqos.Burstable, problem: "InvalidCPUPolicy", message: `annotation cpu-policy: "fast"`},
		{name: "guaranteed BE", doc: "{name: a, cgroup: x, qosClass: be, resources: {limits: {cpu: 1, memory: 1Gi}}}",
			kube: memqos.Guaranteed, class: "BE", be: true, limitBytes: 1 << 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hc, err := hostconfig.Parse([]byte("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- " + tc.doc + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			s := FromHostConfig(hc.Workloads[0], "x")
			n := s.Plan.CPU
			if n.Exclusive != tc.excl || n.CPUs != tc.cpus || string(n.Policy) != tc.policy || n.RequestMilli != tc.reqMilli {
				t.Errorf("CPU need %+v", n)
			}
			if s.Plan.QoS.Kube != tc.kube || s.Class != tc.class || s.Plan.BE != tc.be || s.Plan.MemoryLimit != tc.limitBytes {
				t.Errorf("kube %s class %q BE %v limit %d", s.Plan.QoS.Kube, s.Class, s.Plan.BE, s.Plan.MemoryLimit)
			}
			got, msg := "", ""
			if len(s.Problems) > 0 {
				got, msg = s.Problems[0].Reason, s.Problems[0].Message
			}
			if got != tc.problem || !strings.Contains(msg, tc.message) {
				t.Errorf("problem %q %q, want %q containing %q", got, msg, tc.problem, tc.message)
			}
		})
	}
}

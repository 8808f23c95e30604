package decide

import (
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// decidedPod is a pod with a believed decision of cpus whose own text says
// check.
func decidedPod(name string, cpus cpuset.CPUSet, check workload.DecisionCheck) workload.Workload {
	w := testWorkload(name, cpus.Size(), true, false, nil)
	w.CPU.Decided, w.CPU.Check = cpus, &check
	return w
}

// okCheck is a Guaranteed opted-in pod with limits of n whole CPUs.
func okCheck(n int) workload.DecisionCheck {
	return workload.DecisionCheck{OptedIn: true, LimitCPUs: n}
}

// TestDecisionsValidated: a decision, even the scheduler's, is applied
// only to an opted-in pod that is not BestEffort and whose whole CPU
// limits come to the decision's count (or to the count the kubelet
// actuated after a resize), on CPUs neither reserved nor isolated, and
// never takes the shared pool's last CPU; a refused one is a
// ResourceStatusRefused problem saying why, and the pod runs shared. The
// first case refused is the attack that led here: a BestEffort pod's own
// {"cpuset":"0-3"} on a 4-CPU node whose CPU 0 is reserved.
func TestDecisionsValidated(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	isolated := fixture.MustBuild(fixture.Small4)
	isolated.Isolated = cpuset.New(3)
	resized := decidedPod("p", cpuset.New(2, 3), okCheck(3))
	resized.CPU.CPUs = 3 // the kubelet reports 3 actuated
	for _, tc := range []struct {
		name     string
		w        workload.Workload
		reserved cpuset.CPUSet
		isolated bool
		want     string // "held <CPUs>", or the refusal's words
	}{
		{"applied", decidedPod("p", cpuset.New(2, 3), okCheck(2)), cpuset.New(0), false, "held 2-3"},
		{"resized in place", resized, cpuset.New(0), false, "held 1-3"},
		{"BestEffort on reserved CPUs", decidedPod("p", cpuset.New(0, 1, 2, 3), workload.DecisionCheck{BestEffort: true, LimitError: "none"}),
			cpuset.New(0), false, "does not opt in"},
		{"BestEffort", decidedPod("p", cpuset.New(2, 3), workload.DecisionCheck{OptedIn: true, BestEffort: true}), cpuset.New(0), false, "BestEffort"},
		{"not opted in", decidedPod("p", cpuset.New(2, 3), workload.DecisionCheck{LimitCPUs: 2}), cpuset.New(0), false, "does not opt in"},
		{"fractional limits", decidedPod("p", cpuset.New(2, 3), workload.DecisionCheck{OptedIn: true, LimitError: "spec.containers[0] (a) has 1500m"}),
			cpuset.New(0), false, "whole CPU limits: spec.containers[0] (a) has 1500m"},
		{"more CPUs than the limits", decidedPod("p", cpuset.New(1, 2, 3), okCheck(1)), cpuset.New(0), false, "gives 3 CPUs, but the pod's CPU limits come to 1"},
		{"reserved CPUs", decidedPod("p", cpuset.New(0, 1), okCheck(2)), cpuset.New(0), false, "CPUs 0 are reserved"},
		{"isolated CPUs", decidedPod("p", cpuset.New(2, 3), okCheck(2)), cpuset.New(0), true, "CPUs 3 are isolated"},
		{"the last shared CPU, no reserved ones", decidedPod("p", cpuset.New(0, 1, 2, 3), okCheck(4)), cpuset.New(), false, "leave shared workloads no CPU"},
		{"every CPU but the reserved one", decidedPod("p", cpuset.New(1, 2, 3), okCheck(3)), cpuset.New(0), false, "held 1-3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Topology: topo, Reserved: tc.reserved, Workloads: []workload.Workload{tc.w, testWorkload("shared", 0, false, false, nil)}}
			if tc.isolated {
				in.Topology = isolated
			}
			d := Compute(in)
			a, held := d.Assignments["p"]
			if cpus, ok := strings.CutPrefix(tc.want, "held "); ok {
				for _, p := range d.Problems {
					if p.Workload == "p" {
						t.Errorf("problem %v", p)
					}
				}
				if !held || a.CPUs.String() != cpus {
					t.Fatalf("held %v (%v); want CPUs %s", a.CPUs, held, cpus)
				}
				return
			}
			if held {
				t.Errorf("refused decision applied: %v", a.CPUs)
			}
			if len(d.Problems) != 1 || d.Problems[0].Reason != ReasonResourceStatusRefused || !strings.Contains(d.Problems[0].Message, tc.want) ||
				!strings.Contains(d.Problems[0].Message, workload.AnnotationResourceStatus) {
				t.Fatalf("problems %v, want one %s saying %q", d.Problems, ReasonResourceStatusRefused, tc.want)
			}
			shared, _ := opValue(d.Ops, "locus.slice/shared", cgroup.CPUSetCPUs)
			if got, _ := opValue(d.Ops, "locus.slice/p", cgroup.CPUSetCPUs); got != shared || got == "" {
				t.Errorf("refused pod on %q, shared pool %q", got, shared)
			}
		})
	}
}

// A lease of `locus run` is the agent's own decision: no pod text to hold
// it to, and it is never refused as a pod's would be.
func TestLeaseNotValidated(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	obs := Observation{Topology: topo, Config: &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New()},
		Leases: map[string]Lease{"run-1": {Cgroup: "locus.slice/run-1",
			Assignment: workload.Assignment{CPUs: cpuset.New(0, 1, 2, 3), Policy: cpualloc.FullPCPUs}}}}
	r := Decide(obs, Memory{})
	for _, p := range r.Problems {
		if p.Reason == ReasonResourceStatusRefused {
			t.Fatalf("lease refused: %v", p)
		}
	}
}

package agent

import (
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/nri"
)

// The NRI answer comes from the same decision as the reconcile's writes: a
// container created in a pod the NUMA balancer placed gets its placement's
// cpuset, as the reconcile would write it, not its pool's.
func TestNRIAnswerFollowsTheBalancer(t *testing.T) {
	n := newPodNode(t, cgroup.V2, pod("b", 0))
	n.quietReconcile("b in the shared pool")
	req := []nri.Request{{Pod: nri.Pod{Namespace: "ns", Name: "b"}, Container: nri.Container{Name: "app"}}}
	if got := n.a.decideContainers(req)[0].Values.CPUs; got != "1-3" {
		t.Fatalf("before a placement: cpuset.cpus %q, want the pool's 1-3", got)
	}
	n.a.balanced = decide.Balanced{Workloads: map[string]decide.Placement{"ns/b": {CPUs: cpuset.New(2, 3), Nodes: []int{0}, Home: true}}}
	if got := n.a.decideContainers(req)[0].Values.CPUs; got != "2-3" {
		t.Fatalf("placed on CPUs 2-3: cpuset.cpus %q", got)
	}
}

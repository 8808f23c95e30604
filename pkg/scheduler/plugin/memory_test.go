package plugin

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// withMemory is the pod with its container's memory (and huge page)
// requests and limits set to these quantities.
func withMemory(p *v1.Pod, res map[v1.ResourceName]string) *v1.Pod {
	c := &p.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	if c.Resources.Limits == nil {
		c.Resources.Limits = v1.ResourceList{}
	}
	for name, q := range res {
		c.Resources.Requests[name] = resource.MustParse(q)
		c.Resources.Limits[name] = resource.MustParse(q)
	}
	return p
}

// Filter refuses a node whose zones cannot hold the pod's CPUs and memory
// together, saying which resource is short, and passes one that can; a
// pod asking no memory passes both, as before.
func TestFilterMemory(t *testing.T) {
	held := map[string]workload.Assignment{
		"ns/a": {CPUs: cpuset.New(1, 9), Policy: cpualloc.FullPCPUs},
		"ns/b": {CPUs: cpuset.New(4, 12), Policy: cpualloc.FullPCPUs},
	}
	taken, err := nrt.Build(nrt.Input{Node: "taken", Topology: fixture.MustBuild(machine), Reserved: reserved, Assignments: held,
		Memory: map[string]cpualloc.Memory{"ns/a": {Bytes: 12 << 30}, "ns/b": {Bytes: 12 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := pod("a", nil), pod("b", nil)
	a.Spec.NodeName, b.Spec.NodeName = "taken", "taken"
	e := newEnv(t, nil, []*nrt.Object{taken, report(t, "free", nil)}, a, b)
	waitFor(t, "the bound pods", func() bool { return e.pl.Cluster().Snapshot().Get("taken").Holdings == 2 })
	nodes := []*framework.NodeInfo{node("taken", "16"), node("free", "16")}

	_, got := e.cycle(withMemory(pod("m", nil), map[v1.ResourceName]string{v1.ResourceMemory: "12Gi"}), nodes...)
	if s := got["taken"]; s.Code() != framework.Unschedulable || !strings.Contains(s.Message(), "not enough free memory on the NUMA nodes that could also hold the pod's 4 CPUs (memory 12Gi)") {
		t.Errorf("taken: %v, want Unschedulable for memory", s)
	}
	if s := got["free"]; !s.IsSuccess() {
		t.Errorf("free: %v", s)
	}
	_, got = e.cycle(withMemory(pod("h", nil), map[v1.ResourceName]string{"hugepages-1Gi": "1Gi"}), nodes...)
	if s := got["free"]; s.Code() != framework.Unschedulable || !strings.Contains(s.Message(), "not enough free hugepages-1Gi") {
		t.Errorf("huge pages on a node with none: %v", s)
	}
	_, got = e.cycle(pod("cpus", nil), nodes...)
	for name, s := range got {
		if !s.IsSuccess() {
			t.Errorf("%s, a pod without memory: %v", name, s)
		}
	}
}

// A pod whose memory cannot be read is unresolvable, the container, the
// resource and the value named.
func TestMalformedMemory(t *testing.T) {
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", nil)})
	for _, tc := range []struct {
		res  map[v1.ResourceName]string
		says string
	}{
		{map[v1.ResourceName]string{v1.ResourceMemory: "2Pi"}, "spec.containers[0] (go-demo): resources.requests.memory: 2Pi is more than"},
		{map[v1.ResourceName]string{"hugepages-2Mi": "3Mi"}, "hugepages-2Mi: 3Mi is not a multiple of the page size (2048 KiB)"},
		{map[v1.ResourceName]string{"hugepages-16Mi": "16Mi"}, "\"hugepages-16Mi\": 16Mi: huge pages of that size are not accounted"},
	} {
		_, s := e.pl.PreFilter(e.ctx, framework.NewCycleState(), withMemory(pod("p", nil), tc.res))
		if s.Code() != framework.UnschedulableAndUnresolvable || !strings.Contains(s.Message(), tc.says) {
			t.Errorf("%v: %v, want UnschedulableAndUnresolvable saying %q", tc.res, s, tc.says)
		}
	}
}

package nodeagent_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
)

// A pod pinned or freed moves the shared pool, and the containers on it
// follow: one SharedPoolChanged on the Node says so, not a CgroupUpdated
// on each pod. The pinned pod's own change keeps its events.
func TestSharedPoolChangeIsOneNodeEvent(t *testing.T) {
	n := newNode(t, cgroup.V2, true)
	shared := []*corev1.Pod{n.create(webPod("shared-a")), n.create(webPod("shared-b"))}
	n.start()
	size := func(want int) func(string) bool {
		return func(s string) bool { c, err := cpuset.Parse(s); return err == nil && c.Size() == want }
	}
	cpusOf := func(p *corev1.Pod, what string, ok func(string) bool) string {
		t.Helper()
		return n.waitFileMatch(n.kubelet.ContainerCgroup(p, "web"), "cpuset.cpus", what, ok)
	}
	whole := cpusOf(shared[0], "the shared pool: all but the reserved CPUs", size(14))
	waitUntil(t, "both shared pods in the status", func() bool { return len(n.status().Workloads) == 2 })

	pinned := n.create(boundPod("pinned"))
	own := cpusOf(pinned, "2 CPUs", size(2))
	pool := mustCPUs(t, whole).Difference(mustCPUs(t, own)).String()
	for _, p := range shared {
		cpusOf(p, "the pool without the pinned pod's CPUs", func(s string) bool { return s == pool })
	}
	waitEvent(t, "default", "Node", n.name, corev1.EventTypeNormal, "SharedPoolChanged",
		"shared pool now CPUs "+pool+",", "cpuset.cpus rewritten in 2 containers of 2 workloads")
	waitEvent(t, n.ns, "Pod", "pinned", corev1.EventTypeNormal, "CPUsAssigned")

	deletePod(t, pinned)
	for _, p := range shared {
		cpusOf(p, "the whole pool again", func(s string) bool { return s == whole })
	}
	waitEvent(t, "default", "Node", n.name, corev1.EventTypeNormal, "SharedPoolChanged",
		"shared pool now CPUs "+whole+",", "in 2 containers of 2 workloads")
	// Each shared pod's CgroupUpdated is its joining the pool, once.
	for _, p := range shared {
		var told []string
		for _, e := range events(t, n.ns, "Pod", p.Name) {
			if e.Reason == "CgroupUpdated" && strings.Contains(e.Message, "cpuset.cpus") {
				for range max(e.Count, 1) {
					told = append(told, e.Message)
				}
			}
		}
		if len(told) != 1 {
			t.Errorf("%s: CgroupUpdated of cpuset.cpus %q, want one (joining the pool), the pool's moves told on the Node only", p.Name, told)
		}
	}
}

func mustCPUs(t *testing.T, s string) cpuset.CPUSet {
	t.Helper()
	c, err := cpuset.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

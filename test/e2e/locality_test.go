package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Scenario 3: a pod bound to a CPU of its own that asks for memory locality, on
// this machine with one NUMA node: there is nowhere to move its memory, and the
// agent says so with the seed's event.
func TestMemoryLocalityOneNUMANode(t *testing.T) {
	n := need(t)
	ns := n.namespace(t, "locality")
	pod := n.createPod(t, ns, podSpec{name: "redis-locality", annotations: map[string]string{
		"cpuset-scheduler":              "true",
		"koordinator.sh/memoryLocality": `{"policy": "bestEffort"}`,
	}, cpu: "1", memory: "128Mi/128Mi", args: []string{"-mem", "64Mi"}})
	pod = n.waitRunning(t, ns, pod.Name)
	n.waitEvent(t, ns, "Pod", pod.Name, corev1.EventTypeNormal, "CPUsAssigned")
	e := n.waitEvent(t, ns, "Pod", pod.Name, corev1.EventTypeNormal, "MemoryLocalitySkipped", "no target numa")
	t.Logf("%s: %s", e.Reason, e.Message)
	if got := n.events(t, ns, "Pod", pod.Name, "MemoryLocalityFailed"); len(got) > 0 {
		t.Errorf("MemoryLocalityFailed: %s", got[0].Message)
	}
	// Its memory is on node 0, the only one, as its cpuset.mems says.
	if got := readFile(t, n.containerCgroup(t, pod, "w", "cpuset")+"/cpuset.mems"); got != "0" {
		t.Errorf("cpuset.mems = %s, want 0", got)
	}
}

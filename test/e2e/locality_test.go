package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Scenario 3: a pod bound to a CPU of its own that asks for memory locality, on
// this machine with one NUMA node: there is nowhere to move its memory, and the
// agent says so with the seed's event.
func TestMemoryLocalityOneNUMANode(t *testing.T) {
	n := need(t)
	ns := n.namespace(t, "locality")
	pod := n.localityPod(t, ns)
	n.waitEvent(t, ns, "Pod", pod.Name, corev1.EventTypeNormal, "CPUsAssigned")
	e := n.waitEvent(t, ns, "Pod", pod.Name, corev1.EventTypeNormal, "MemoryLocalitySkipped", "no target numa")
	t.Logf("%s: %s", e.Reason, e.Message)
	n.noEvents(t, ns, pod.Name, "MemoryLocalityFailed")
	// Its memory is on node 0, the only one, as its cpuset.mems says.
	if got := readFile(t, n.containerCgroup(t, pod, "w", "cpuset")+"/cpuset.mems"); got != "0" {
		t.Errorf("cpuset.mems = %s, want 0", got)
	}
}

// Scenario 3b: the seed's own ack-slo-config for memory locality (lsClass
// bestEffort, its ml-config.yaml applied unchanged) on this one-NUMA-node
// machine. An LS pod bound to a CPU of its own follows the class and is told
// "no target numa"; a pod without CPUs of its own asking for bestEffort is
// told the same rather than nothing; migrateIntervalMinutes "none" turns
// memory locality off, so that pod hears nothing at all.
func TestMemoryLocalitySeedConfig(t *testing.T) {
	n := need(t)
	n.sloConfigFrom(t, "ml-config.yaml")
	ns := n.namespace(t, "locality-seed")
	ls := map[string]string{"koordinator.sh/qosClass": "LS"}
	pinned := n.createPod(t, ns, podSpec{name: "ls-pinned", labels: ls,
		annotations: map[string]string{"cpuset-scheduler": "true"}, cpu: "1", memory: "64Mi/128Mi", args: []string{"-mem", "32Mi"}})
	shared := n.createPod(t, ns, podSpec{name: "shared-besteffort",
		annotations: map[string]string{"koordinator.sh/memoryLocality": `{"policy": "bestEffort"}`}, memory: "64Mi/128Mi", args: []string{"-mem", "32Mi"}})
	off := n.createPod(t, ns, podSpec{name: "interval-none", labels: ls,
		annotations: map[string]string{"koordinator.sh/memoryLocality": `{"policy": "bestEffort", "migrateIntervalMinutes": "none"}`},
		memory:      "64Mi/128Mi", args: []string{"-mem", "32Mi"}})
	for _, p := range []*corev1.Pod{pinned, shared, off} {
		n.waitRunning(t, ns, p.Name)
	}
	n.waitEvent(t, ns, "Pod", pinned.Name, corev1.EventTypeNormal, "CPUsAssigned")
	for _, p := range []*corev1.Pod{pinned, shared} {
		e := n.waitEvent(t, ns, "Pod", p.Name, corev1.EventTypeNormal, "MemoryLocalitySkipped", "no target numa")
		t.Logf("%s: %s %s", p.Name, e.Reason, e.Message)
	}
	time.Sleep(3 * time.Second) // a few reconciles more: still nothing for the pod that turned it off
	for _, p := range []*corev1.Pod{pinned, shared, off} {
		for _, reason := range []string{"MemoryLocalitySuccess", "MemoryLocalityCompleted", "MemoryLocalityFailed", "MemoryLocalitySkipped"} {
			got := n.events(t, ns, "Pod", p.Name, reason)
			if p == off && len(got) > 0 || p != off && reason != "MemoryLocalitySkipped" && len(got) > 0 {
				t.Errorf("%s: unexpected %s: %s", p.Name, reason, got[0].Message)
			}
			for _, e := range got {
				if strings.Contains(e.Message, "numa:  ") {
					t.Errorf("%s: %s with an empty node list: %q", p.Name, reason, e.Message)
				}
			}
		}
	}
}

// localityPod starts a pod bound to one CPU of its own that asks for memory
// locality (bestEffort) and touches 64 MiB, and returns it running.
func (n *e2eNode) localityPod(t *testing.T, ns string) *corev1.Pod {
	t.Helper()
	pod := n.createPod(t, ns, podSpec{name: "redis-locality", annotations: map[string]string{
		"cpuset-scheduler":              "true",
		"koordinator.sh/memoryLocality": `{"policy": "bestEffort"}`,
	}, cpu: "1", memory: "128Mi/128Mi", args: []string{"-mem", "64Mi"}})
	return n.waitRunning(t, ns, pod.Name)
}

// noEvents fails the test for each of the reasons the pod has an Event of.
func (n *e2eNode) noEvents(t *testing.T, ns, pod string, reasons ...string) {
	t.Helper()
	for _, reason := range reasons {
		if got := n.events(t, ns, "Pod", pod, reason); len(got) > 0 {
			t.Errorf("%s: %s", reason, got[0].Message)
		}
	}
}

package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/cpuset"
)

// A pod bound to a CPU of its own that asks for memory locality, on the
// guest's two NUMA nodes: its memory is kept on its CPU's node (cpuset.mems),
// and the agent reports the seed's one-line MemoryLocalitySuccess with the
// local ratio, never Skipped or Failed.
func TestGuestMemoryLocality(t *testing.T) {
	n := needGuest(t)
	ns := n.namespace(t, "guest-locality")
	pod := n.localityPod(t, ns)
	cpus := waitCPUs(t, n.containerCgroup(t, pod, "w", ""), 1)
	e := n.waitEvent(t, ns, "Pod", pod.Name, corev1.EventTypeNormal, "MemoryLocalitySuccess", "cur local memory ratio")
	t.Logf("cpus %s: %s: %s", cpus, e.Reason, e.Message)
	n.noEvents(t, ns, pod.Name, "MemoryLocalitySkipped", "MemoryLocalityFailed")
	if got, want := readFile(t, n.containerCgroup(t, pod, "w", "")+"/cpuset.mems"), nodesOf(t, cpus); got != want {
		t.Errorf("cpuset.mems = %s, want %s, the node of cpus %s", got, want, cpus)
	}
}

// nodesOf are the NUMA nodes of cpus, as the kernel lists them.
func nodesOf(t *testing.T, cpus cpuset.CPUSet) string {
	t.Helper()
	dirs, _ := filepath.Glob("/sys/devices/system/node/node[0-9]*")
	var nodes []int
	for _, d := range dirs {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "node"))
		if err != nil {
			t.Fatal(err)
		}
		list, err := cpuset.Parse(readFile(t, filepath.Join(d, "cpulist")))
		if err != nil {
			t.Fatal(err)
		}
		if !list.Intersection(cpus).IsEmpty() {
			nodes = append(nodes, id)
		}
	}
	return cpuset.New(nodes...).String()
}

// The memory locality seed as its walk-through runs it: its ack-slo-config
// (ml-config.yaml, lsClass bestEffort) and its redis Pod (cpuset-scheduler,
// limits.cpu 4, with example-redis-config), unchanged, which the host's node
// cannot admit. On the guest's two NUMA nodes of four CPUs each the pod is
// bound to the four of one node, its memory kept there (cpuset.mems), and the
// agent reports MemoryLocalitySuccess with the local ratio.
func TestGuestSeedMemoryLocality(t *testing.T) {
	n := needGuest(t)
	n.sloConfigFrom(t, "ml-config.yaml")
	ns := n.namespace(t, "seed-locality")
	p := n.applySeed(t, ns, "pkg/kube/nodeagent/testdata/redis-cpuset.yaml", "-mem", "64Mi").Pods[0]
	p = n.waitRunning(t, ns, p.Name)
	container := n.containerCgroup(t, p, "redis", "")
	cpus := waitCPUs(t, container, 4)
	n.waitEvent(t, ns, "Pod", p.Name, corev1.EventTypeNormal, "CPUsAssigned")
	e := n.waitEvent(t, ns, "Pod", p.Name, corev1.EventTypeNormal, "MemoryLocalitySuccess", "cur local memory ratio")
	t.Logf("cpus %s: %s: %s", cpus, e.Reason, e.Message)
	if mems := nodesOf(t, cpus); len(mems) != 1 {
		t.Errorf("cpus %s span NUMA nodes %s, want one", cpus, mems)
	}
	if got, want := readFile(t, filepath.Join(container, "cpuset.mems")), nodesOf(t, cpus); got != want {
		t.Errorf("cpuset.mems = %s, want %s, the node of cpus %s", got, want, cpus)
	}
	n.noEvents(t, ns, p.Name, "MemoryLocalitySkipped", "MemoryLocalityFailed")
}

package e2e

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The TestGuest tests run on the node inside a QEMU guest (hack/e2e-guest.sh):
// cgroup v2, where the kernel has the seed's memory.min, memory.low and
// memory.high, two NUMA nodes, and containerd 2 with NRI.

// needGuest skips the test on a node that is not the guest's.
func needGuest(t *testing.T) *e2eNode {
	t.Helper()
	n := need(t)
	if !cgroupV2 {
		t.Skip("needs the cgroup v2 node in the guest: hack/e2e-guest.sh, which make e2e runs")
	}
	return n
}

// The seed's two worked examples on a Guaranteed pod (request = limit = 100
// MiB): minLimitPercent 100 → memory.min 104857600, throttlingPercent 80 →
// memory.high 83886080. With NRI the container is created with them: its
// first instruction already runs under them. Upstream v2 has no wmark files:
// the Node says so once.
func TestGuestSeedWorkedExamples(t *testing.T) {
	n := needGuest(t)
	nri := n.withNRI(t)
	n.sloConfig(t)
	ns := n.namespace(t, "seedmem")
	n.createPod(t, ns, podSpec{name: "seed", labels: lsLabel, memory: "100Mi/100Mi", cpu: "500m",
		annotations: map[string]string{"koordinator.sh/memoryQOS": `{"policy": "auto", "minLimitPercent": 100, "throttlingPercent": 80}`}})
	p := n.waitRunning(t, ns, "seed")
	container := n.containerCgroup(t, p, "w", "")
	want := map[string]string{"memory.min": "104857600", "memory.high": "83886080", "memory.low": "0"}
	for f, v := range want {
		waitFile(t, filepath.Join(container, f), v)
	}
	first := n.firstLine(t, p, "w")
	t.Logf("first line %v", first)
	if nri {
		for f, v := range want {
			if first[f] != v {
				t.Errorf("with NRI the first instruction saw %s %s, want %s", f, first[f], v)
			}
		}
		// An answer past its bound starts the container as the runtime has it,
		// and says so: tell that apart from a decision without the values.
		for _, e := range n.events(t, ns, "Pod", "seed", "CreatedUnpinned") {
			t.Logf("the pod's creation was not answered in time: %s", e.Message)
		}
	}
	n.waitEvent(t, "default", "Node", n.name, corev1.EventTypeWarning, "KnobUnsupported", "memory.wmark_ratio is not supported by this kernel")
}

// pageFloor is what the kernel reads back for a memory byte count it keeps in
// pages.
func pageFloor(v int64) string { return strconv.FormatInt(v/4096*4096, 10) }

// The seed's memory QoS manifests (redis-demo LS, stress-demo BE, policy auto)
// and its ack-slo-config, unchanged, on the kernel that has the seed's files.
// policy auto is the recommended profile: memory.min, memory.low and
// memory.high stay at the kernel's values, the wmark files are absent
// upstream. With lowLimitPercent 100 and throttlingPercent 80 on top: memory.low
// = the request (2Gi) and memory.high = 80 % of the limit (6Gi) on the
// container; the pod carries its containers' total memory.low and keeps the
// runtime's memory.high (docs/memory-qos.md, Pod cgroup). policy none puts
// back what the container was created with.
func TestGuestSeedMemoryQoSManifests(t *testing.T) {
	n := needGuest(t)
	n.sloConfig(t)
	ns := n.namespace(t, "seedmanifests")
	redis := n.applySeed(t, ns, "pkg/kube/nodeagent/testdata/redis-demo.yaml", "-mem", "32Mi").Pods[0]
	stress := n.applySeed(t, ns, "pkg/kube/nodeagent/testdata/stress-demo.yaml", "-mem", "32Mi").Pods[0]
	redis = n.waitRunning(t, ns, redis.Name)
	stress = n.waitRunning(t, ns, stress.Name)
	container := n.containerCgroup(t, redis, "redis", "")
	pod := filepath.Dir(container)
	kernel := map[string]string{"memory.min": "0", "memory.low": "0", "memory.high": "max"}
	n.waitEvent(t, "default", "Node", n.name, corev1.EventTypeWarning, "KnobUnsupported", "memory.wmark_ratio is not supported by this kernel")
	for _, dir := range []string{container, pod} {
		for f, v := range kernel {
			if got := readFile(t, filepath.Join(dir, f)); got != v {
				t.Errorf("%s %s = %s under policy auto, want the kernel's %s (the recommended percentages are 0)", dir, f, got, v)
			}
		}
	}

	patch := []byte(`{"metadata":{"annotations":{"koordinator.sh/memoryQOS":"{\"policy\": \"auto\", \"lowLimitPercent\": 100, \"throttlingPercent\": 80}"}}}`)
	if _, err := n.cp.Client.CoreV1().Pods(ns).Patch(ctxT(t), redis.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(container, "memory.high"), pageFloor(6<<30/100*80))
	for _, dir := range []string{container, pod} {
		waitFile(t, filepath.Join(dir, "memory.low"), "2147483648")
	}
	if got := readFile(t, filepath.Join(pod, "memory.high")); got != "max" {
		t.Errorf("pod memory.high = %s, want the runtime's max", got)
	}
	n.waitEvent(t, ns, "Pod", redis.Name, corev1.EventTypeNormal, "CgroupUpdated", "redis:memory.low=2147483648")
	be := n.containerCgroup(t, stress, "stress", "")
	for f, v := range kernel {
		if got := readFile(t, filepath.Join(be, f)); got != v {
			t.Errorf("stress %s = %s, want the kernel's %s (a BE pod without a request gets no protection)", f, got, v)
		}
	}

	patch = []byte(`{"metadata":{"annotations":{"koordinator.sh/memoryQOS":"{\"policy\": \"none\"}"}}}`)
	if _, err := n.cp.Client.CoreV1().Pods(ns).Patch(ctxT(t), redis.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{container, pod} {
		for f, v := range kernel {
			waitFile(t, filepath.Join(dir, f), v)
		}
	}
}

// The seed's ack-slo-pod-config (enabledNamespaces allow-ns,
// disabledNamespaces block-ns) beside a class whose memory QoS is off but
// has parameters (lsClass enable false, lowLimitPercent 50): the namespace
// switch turns memory QoS on with the class's parameters (the table's row 4),
// so an ordinary Burstable pod gets memory.low = half its request in allow-ns,
// and nothing in block-ns or in a namespace the switch does not name.
func TestGuestSeedNamespaces(t *testing.T) {
	n := needGuest(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ack-slo-config", Namespace: "kube-system"},
		Data: map[string]string{"resource-qos-config": `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": false, "lowLimitPercent": 50}}}}`}}
	if _, err := n.cp.Client.CoreV1().ConfigMaps("kube-system").Create(ctxT(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.cp.ApplyFile(t, filepath.Join(n.repo, "internal/kubetest/testdata/ack-slo-pod-config.yaml"))
	t.Cleanup(func() {
		for _, name := range []string{"ack-slo-config", "ack-slo-pod-config"} {
			_ = n.cp.Client.CoreV1().ConfigMaps("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	for _, name := range []string{"allow-ns", "block-ns"} { // the seed's names
		if _, err := n.cp.Client.CoreV1().Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.deleteAll(t, name) })
	}
	other := n.namespace(t, "guest-ns")
	low := map[string]string{"allow-ns": "33554432", "block-ns": "0", other: "0"}
	cgroups := map[string]string{}
	// All three created before any is waited for: they start together, where
	// one after the other each waited out the emulated CPUs' pod start alone.
	for ns := range low {
		n.createPod(t, ns, podSpec{name: "web", memory: "64Mi/128Mi", args: []string{"-mem", "32Mi"}})
	}
	for ns := range low {
		cgroups[ns] = n.containerCgroup(t, n.waitRunning(t, ns, "web"), "w", "")
	}
	waitFile(t, filepath.Join(cgroups["allow-ns"], "memory.low"), low["allow-ns"])
	time.Sleep(3 * time.Second) // a few reconciles more: nothing for the others
	for ns, want := range low {
		if got := readFile(t, filepath.Join(cgroups[ns], "memory.low")); got != want {
			t.Errorf("%s: memory.low = %s, want %s", ns, got, want)
		}
	}
}

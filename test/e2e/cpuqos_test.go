package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cpuQoSConfig is ack-slo-config with CPU QoS on for LS, and for BE as be
// says ("true" or "false").
func cpuQoSConfig(be string) []byte {
	return []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: ack-slo-config
  namespace: kube-system
data:
  resource-qos-config: |-
    {"clusterStrategy": {
      "lsClass": {"cpuQOS": {"enable": true, "groupIdentity": 2}},
      "beClass": {"cpuQOS": {"enable": ` + be + `, "groupIdentity": -1}}}}
`)
}

// CPU QoS on the real node, with the seed's LS redis and BE stress pods:
// the BE pod's cgroup becomes SCHED_IDLE (this kernel has cpu.idle; the
// kernel then shows its weight as 3), the LS pod keeps the kubelet's values,
// and switching the BE class off gives the kubelet's values back (cpu.idle
// 0, the BestEffort weight 2 the kubelet set).
func TestCPUQoSOnTheNode(t *testing.T) {
	n := need(t)
	n.cp.ApplyYAML(t, cpuQoSConfig("true"))
	t.Cleanup(func() {
		_ = n.cp.Client.CoreV1().ConfigMaps("kube-system").Delete(context.Background(), "ack-slo-config", metav1.DeleteOptions{})
	})
	ns := n.namespace(t, "cpuqos")
	redis := n.applySeed(t, ns, "pkg/kube/nodeagent/testdata/redis-demo.yaml", "-mem", "32Mi").Pods[0]
	stress := n.applySeed(t, ns, "pkg/kube/nodeagent/testdata/stress-demo.yaml", "-mem", "32Mi").Pods[0]
	redis = n.waitRunning(t, ns, redis.Name)
	stress = n.waitRunning(t, ns, stress.Name)
	if stress.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("stress is %s, want BestEffort as the seed's resources say", stress.Status.QOSClass)
	}
	be, ls := n.podCgroup(t, stress, "cpu"), n.podCgroup(t, redis, "cpu")
	waitFile(t, filepath.Join(be, "cpu.idle"), "1")
	if got := readFile(t, filepath.Join(be, "cpu.shares")); got != "3" {
		t.Errorf("BE pod cpu.shares = %s while idle, want the kernel's 3", got)
	}
	n.waitEvent(t, ns, "Pod", stress.Name, corev1.EventTypeNormal, "CgroupUpdated", "cpu.idle=1")
	lsShares := readFile(t, filepath.Join(ls, "cpu.shares"))
	if got := readFile(t, filepath.Join(ls, "cpu.idle")); got != "0" || lsShares == "3" {
		t.Errorf("LS pod cpu.idle %s, cpu.shares %s: want the kubelet's values", got, lsShares)
	}
	// Containers are the pod's business: never written.
	if got := readFile(t, filepath.Join(n.containerCgroup(t, stress, "stress", "cpu"), "cpu.idle")); got != "0" {
		t.Errorf("BE container cpu.idle = %s, want 0: only the pod cgroup is written", got)
	}

	n.cp.ApplyYAML(t, cpuQoSConfig("false"))
	waitFile(t, filepath.Join(be, "cpu.idle"), "0")
	// Leaving cpu.idle resets the weight to 1024; the agent writes the
	// kubelet's weight back just after, a second write the test may see
	// the node between.
	waitFile(t, filepath.Join(be, "cpu.shares"), "2")
	if got := readFile(t, filepath.Join(ls, "cpu.shares")); got != lsShares || strings.TrimSpace(got) == "" {
		t.Errorf("LS pod cpu.shares %s, want %s throughout", got, lsShares)
	}
}

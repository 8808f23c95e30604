package nodeagent_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/sloconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// setQoSKeys replaces the ConfigMap with both keys the agent reads of it.
func setQoSKeys(t *testing.T, name, resQoS, burst string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string]string{sloconfig.ConfigKeyResourceQoS: resQoS, sloconfig.ConfigKeyCPUBurst: burst}}
	if _, err := cp.Client.CoreV1().ConfigMaps("kube-system").Update(callCtx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestCPUBurstFromConfigMap: cpu-burst-config, beside resource-qos-config
// in the same ConfigMap, gives an LS pod's container its burst buffer from
// its CPU limit and the pod cgroup the sum; the pod's annotation wins; a
// malformed value keeps the last good one, and policy none restores.
func TestCPUBurstFromConfigMap(t *testing.T) {
	n := configNode(t, cgroup.V1, false, lsConfig(false, 0))
	setQoSKeys(t, n.resQoS, lsConfig(false, 0), `{"clusterStrategy": {"policy": "cpuBurstOnly", "cpuBurstPercent": 50}}`)
	pod := webPod("web")
	pod.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
	pod = n.create(pod)
	other := webPod("other")
	other.Annotations = map[string]string{workload.AnnotationCPUBurst: `{"policy": "none"}`}
	other.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1")
	other = n.create(other)
	cg, otherCg := n.kubelet.ContainerCgroup(pod, "web"), n.kubelet.ContainerCgroup(other, "web")
	n.start()
	n.waitFile(cg, "cpu.cfs_burst_us", "100000")
	n.waitFile(n.kubelet.PodCgroup(pod), "cpu.cfs_burst_us", "100000")
	setQoSKeys(t, n.resQoS, lsConfig(false, 0), `{"clusterStrategy": {"policy": "cpuBurstOnly", "cpuBurstPercent": 20}}`)
	n.waitFile(cg, "cpu.cfs_burst_us", "40000")
	setQoSKeys(t, n.resQoS, lsConfig(false, 0), `{"clusterStrategy": {"policy": "sometimes"}}`)
	waitUntil(t, "status to show the config error", func() bool { return n.status().ConfigError != "" })
	if got := n.kubelet.File(cg, "cpu.cfs_burst_us"); got != "40000" {
		t.Fatalf("a malformed cpu-burst-config changed the buffer to %s", got)
	}
	setQoSKeys(t, n.resQoS, lsConfig(false, 0), `{"clusterStrategy": {"policy": "none"}}`)
	n.waitFile(cg, "cpu.cfs_burst_us", "0")
	n.waitFile(n.kubelet.PodCgroup(pod), "cpu.cfs_burst_us", "0")
	if got := n.kubelet.File(otherCg, "cpu.cfs_burst_us"); got != "0" {
		t.Errorf("the pod whose annotation says none got %s", got)
	}
}

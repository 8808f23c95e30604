package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/deviceplugintest"
	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/status"
)

const guestDevice = "example.com/locus-test"

// A device plugin written for the test registers two fake devices with the
// guest's real kubelet, one on each NUMA node. A pod opting in to two CPUs of
// its own and asking for a device gets the node-1 one (the only one left after
// a first pod takes the node-0 one); the agent, reading the kubelet's real
// PodResources socket, gives the second pod CPUs of node 1 only and
// cpuset.mems 1, as its cgroup shows; its status says where the device data
// came from.
func TestGuestDevicePlugin(t *testing.T) {
	n := needGuest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plugin := &deviceplugintest.Plugin{ResourceName: guestDevice, Dir: "/var/lib/kubelet/device-plugins", // the kubelet's, whatever its --root-dir
		Devices: []deviceplugintest.Device{{ID: "dev-node0", Nodes: []int64{0}}, {ID: "dev-node1", Nodes: []int64{1}}}}
	if err := plugin.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer plugin.Stop()
	kubetest.WaitFor(t, "the node to offer "+guestDevice, podTimeout, func(ctx context.Context) (bool, error) {
		node, err := n.cp.Client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if q := node.Status.Allocatable[corev1.ResourceName(guestDevice)]; q.Value() != 2 {
			return false, fmt.Errorf("allocatable %s: %s", guestDevice, q.String())
		}
		return true, nil
	})
	ns := n.namespace(t, "guest-device")
	first := n.devicePod(t, ns, "first")
	n.waitRunning(t, ns, first.Name)
	if got := plugin.Allocated(); len(got) != 1 || len(got[0]) != 1 {
		t.Fatalf("the plugin allocated %v for the first pod", got)
	}
	// The kubelet gives what is free; the first pod must have taken the
	// node-0 device for the second to get node 1's: otherwise swap roles.
	wantNode, second := "1", "second"
	if plugin.Allocated()[0][0] == "dev-node1" {
		wantNode = "0"
	}
	n.devicePod(t, ns, second)
	p := n.waitRunning(t, ns, second)
	dir := n.containerCgroup(t, p, "w", "")
	cpus := waitCPUs(t, dir, 2)
	if got := nodesOf(t, cpus); got != wantNode {
		t.Errorf("pod %s holding the node-%s device has CPUs %s, on NUMA nodes %s", second, wantNode, cpus, got)
	}
	waitFile(t, filepath.Join(dir, "cpuset.mems"), wantNode)
	t.Logf("%s: device on node %s, CPUs %s, cpuset.mems %s", second, wantNode, cpus, readFile(t, filepath.Join(dir, "cpuset.mems")))
	var d *status.Devices
	kubetest.WaitFor(t, "the agent's status to count both devices", fileTimeout, func(context.Context) (bool, error) {
		st, err := status.Read(filepath.Join(n.dir, "agent"))
		if err != nil {
			return false, err
		}
		d = st.Node.Devices
		if d == nil || d.Problem != "" || d.Held < 2 {
			return false, fmt.Errorf("status devices %+v", d)
		}
		return true, nil
	})
	if !strings.HasSuffix(d.Source, "pod-resources/kubelet.sock") || d.WithTopology < 2 {
		t.Errorf("status devices %+v: want the kubelet's PodResources socket and both devices with their nodes", d)
	}
}

// devicePod starts a pod opting in to two CPUs of its own and one guestDevice.
func (n *e2eNode) devicePod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"cpuset-scheduler": "true"}},
		Spec: corev1.PodSpec{NodeName: n.name, Containers: []corev1.Container{{Name: "w", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("64Mi"),
				corev1.ResourceName(guestDevice): resource.MustParse("1")}}}}}}
	n.runnable(&pod.Spec)
	created, err := n.cp.Client.CoreV1().Pods(ns).Create(ctxT(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

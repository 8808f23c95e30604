package nodeagent_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/podresourcestest"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

const fakeResource = "example.com/fake"

// devicePod opts in to cpus CPUs of its own in one container, asking for
// one fakeResource device when device is set.
func devicePod(name string, cpus string, device bool) *corev1.Pod {
	res := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus)}}
	if device {
		res.Limits[fakeResource] = resource.MustParse("1")
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{workload.AnnotationCPUSet: "true"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "app", Resources: res}}}}
}

// withPodResources points the agent at a PodResources socket.
func withPodResources(socket string) func(*kubeOptions) {
	return func(o *kubeOptions) { o.Source.PodResourcesSocket = socket }
}

// A pinned pod holding a device the kubelet reports on node 1 gets CPUs
// and memory there, though packing alone would have put it on node 0
// beside the other pod; the status says where the device data came from,
// and the report lists the device resource on each zone.
func TestPodDevicesFromPodResources(t *testing.T) {
	n := newNode(t, cgroup.V1, false)
	dir := podresourcestest.TempDir(t)
	srv := podresourcestest.Start(t, dir)
	plain := n.create(devicePod("a-plain", "4", false))
	gpu := n.create(devicePod("gpu", "2", true))
	srv.Set(&v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		podresourcestest.Pod(n.ns, "gpu", "main", podresourcestest.Group(fakeResource, []string{"dev-1"}, 1))}},
		&v1.AllocatableResourcesResponse{Devices: []*v1.ContainerDevices{
			podresourcestest.Group(fakeResource, []string{"dev-0"}, 0), podresourcestest.Group(fakeResource, []string{"dev-1"}, 1)}})
	n.start(withPodResources(podresourcestest.Socket(dir)))

	node1 := cpuset.New(4, 5, 6, 7, 12, 13, 14, 15)
	got := n.waitFileMatch(n.kubelet.ContainerCgroup(gpu, "main"), "cpuset.cpus", "two CPUs of node 1", func(s string) bool {
		c, err := cpuset.Parse(s)
		return err == nil && c.Size() == 2 && c.IsSubsetOf(node1)
	})
	n.waitFile(n.kubelet.ContainerCgroup(gpu, "main"), "cpuset.mems", "1")
	n.waitFileMatch(n.kubelet.ContainerCgroup(plain, "main"), "cpuset.cpus", "four CPUs", func(s string) bool {
		c, err := cpuset.Parse(s)
		return err == nil && c.Size() == 4
	})
	t.Logf("gpu holds CPUs %s", got)
	waitNRT(t, n.name, "listing the device resource per zone", func(o *nrt.Object, _ nrt.CPUTopology) bool {
		return deviceEntry(o, "node-0") == "1/1/1" && deviceEntry(o, "node-1") == "1/1/0"
	})
	var d *status.Devices
	for range 100 {
		if d = n.status().Node.Devices; d != nil && d.Held == 1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d == nil || d.Problem != "" || d.Source != podresourcestest.Socket(dir) || d.Containers != 1 || d.Held != 1 ||
		d.Allocatable != 2 || d.WithTopology != 2 {
		t.Fatalf("status devices %+v", d)
	}
}

// deviceEntry is a zone's fakeResource entry as capacity/allocatable/available.
func deviceEntry(o *nrt.Object, zone string) string {
	for _, z := range o.Zones {
		for _, r := range z.Resources {
			if z.Name == zone && r.Name == fakeResource {
				return r.Capacity.String() + "/" + r.Allocatable.String() + "/" + r.Available.String()
			}
		}
	}
	return ""
}

// Without the socket, or with one that never answers, the agent goes on
// without device data: the pods are pinned, and the status says why.
func TestPodResourcesMissingOrSlow(t *testing.T) {
	for _, tc := range []struct {
		name, problem string
		slow          bool
	}{{"missing", "no socket", false}, {"slow", "DeadlineExceeded", true}} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, cgroup.V1, false)
			dir := podresourcestest.TempDir(t)
			if tc.slow {
				podresourcestest.Start(t, dir).Delay(time.Minute)
			}
			pod := n.create(devicePod("gpu", "2", true))
			n.start(withPodResources(podresourcestest.Socket(dir)))
			n.waitFileMatch(n.kubelet.ContainerCgroup(pod, "main"), "cpuset.cpus", "two CPUs", func(s string) bool {
				c, err := cpuset.Parse(s)
				return err == nil && c.Size() == 2
			})
			var d *status.Devices
			for range 100 {
				if d = n.status().Node.Devices; d != nil && strings.Contains(d.Problem, tc.problem) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if d == nil || !strings.Contains(d.Problem, tc.problem) || !strings.Contains(d.Problem, podresourcestest.Socket(dir)) {
				t.Fatalf("status devices %+v, want a problem naming the socket and %q", d, tc.problem)
			}
		})
	}
}

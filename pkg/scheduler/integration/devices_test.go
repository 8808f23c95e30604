package integration

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// A pod whose ResourceClaim was allocated a GPU goes to the node of the
// GPU's slice, though the scoring strategy prefers the other node, and its
// CPUs to the GPU's NUMA node there (node 1, where packing alone would put
// them on node 0): the report's zone lists the GPU's PCI address, the
// slice publishes it as pciBusID.
func TestDRADeviceScoresNodesAndCPUs(t *testing.T) {
	c := newCluster(t, 2, false)
	withGPU, busy := c.ns+"-0", c.ns+"-1"
	const gpu = "0000:af:00.0"
	topo := fixture.MustBuild(machine)
	topo.Devices = []topology.PCIDevice{{Address: "0000:18:00.0", Class: 0x030200, NUMA: 0}, {Address: gpu, Class: 0x030200, NUMA: 1}}
	o, err := nrt.Build(nrt.Input{Node: withGPU, Topology: topo, Reserved: reserved})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Dynamic.Resource(nrt.GVR).Create(callCtx(t), toUnstructured(t, o), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A pinned pod runs on busy: MostAllocated prefers it, devices aside.
	cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "running", Namespace: c.ns},
		Spec: corev1.PodSpec{NodeName: busy, Containers: []corev1.Container{{Name: "app", Image: "app"}}}})
	publish(t, busy, machine, map[string]workload.Assignment{c.ns + "/running": {CPUs: cpuset.New(1, 9), Policy: cpualloc.FullPCPUs}})

	const driver = "gpu.example.com"
	pool := c.ns + "-gpus"
	cp.CreateResourceSlice(t, pool, driver, withGPU,
		kubetest.SliceDevice{Name: "gpu-0", Attributes: map[string]any{workload.AttributePCIBusID: "0000:18:00.0"}},
		kubetest.SliceDevice{Name: "gpu-1", Attributes: map[string]any{workload.AttributePCIBusID: gpu}})
	cp.CreateAllocatedClaim(t, c.ns, "gpu", driver, pool, "gpu-1")
	startScheduler(t)

	claim := "gpu"
	two := resource.MustParse("2")
	cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: c.ns, Annotations: map[string]string{workload.AnnotationCPUSet: "true"}},
		Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}},
			Containers: []corev1.Container{{Name: "app", Image: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: two}, Limits: corev1.ResourceList{corev1.ResourceCPU: two}}}}}})
	got := waitScheduled(t, c.ns, []string{"trainer"})["trainer"]
	if got.pod.Spec.NodeName != withGPU || !slices.Equal(got.rs.NUMANodes, []int{1}) || got.rs.CPUs.Size() != 2 {
		t.Fatalf("trainer on %s, CPUs %s on NUMA nodes %v; want 2 CPUs of NUMA node 1 of %s, the GPU's", got.pod.Spec.NodeName, got.rs.CPUs, got.rs.NUMANodes, withGPU)
	}
	checkSigned(t, map[string]placed{"trainer": got})
}

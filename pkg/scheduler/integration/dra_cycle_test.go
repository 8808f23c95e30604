package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// The GPUs of every node in these tests: one on each NUMA node, as the
// node's report lists them (locus.io/pci-devices).
const (
	gpuAddrOn0 = "0000:18:00.0"
	gpuAddrOn1 = "0000:af:00.0"
)

// withSchedulerDRA turns on the scheduler's DynamicResourceAllocation
// gate for the test, as the API server's is: the framework reads the
// process's gate (not the one Start parses flags into) when it builds
// its DRA manager and its default plugins.
func withSchedulerDRA(t *testing.T) {
	t.Helper()
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.DynamicResourceAllocation, true)
}

// publishWithGPUs writes the node's report, its zones listing a GPU each,
// with the CPUs held by the pods in held.
func publishWithGPUs(t *testing.T, node string, held map[string]workload.Assignment) {
	t.Helper()
	topo := fixture.MustBuild(machine)
	topo.Devices = []topology.PCIDevice{{Address: gpuAddrOn0, Class: 0x030200, NUMA: 0}, {Address: gpuAddrOn1, Class: 0x030200, NUMA: 1}}
	o, err := nrt.Build(nrt.Input{Node: node, Topology: topo, Reserved: reserved, Assignments: held})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Dynamic.Resource(nrt.GVR).Create(callCtx(t), toUnstructured(t, o), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// holdCPUs runs a pod on node that holds cpus, as its agent reports it.
func holdCPUs(t *testing.T, ns, node string, cpus cpuset.CPUSet) map[string]workload.Assignment {
	t.Helper()
	name := "holder-" + node
	cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app"}}}})
	return map[string]workload.Assignment{ns + "/" + name: {CPUs: cpus, Policy: cpualloc.FullPCPUs}}
}

// createClaimPod creates a pinned pod of two CPUs that uses the claim.
func createClaimPod(t *testing.T, ns, name, claim string) {
	t.Helper()
	two := resource.MustParse("2")
	cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{workload.AnnotationCPUSet: "true"}},
		Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}},
			Containers: []corev1.Container{{Name: "app", Image: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: two}, Limits: corev1.ResourceList{corev1.ResourceCPU: two}}}}}})
}

// waitAllocated waits until the scheduler allocated the claim and reserved
// it for the pod, and returns the device it was given, as pool/device.
func waitAllocated(t *testing.T, ns, claim, pod string) string {
	t.Helper()
	var got string
	kubetest.WaitFor(t, "claim "+claim+" allocated to "+pod, 30*time.Second, func(ctx context.Context) (bool, error) {
		c, err := cp.Client.ResourceV1beta1().ResourceClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 {
			return false, fmt.Errorf("claim %s not allocated one device: %+v", claim, c.Status.Allocation)
		}
		if !slices.ContainsFunc(c.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.Name == pod }) {
			return false, fmt.Errorf("claim %s not reserved for %s: %v", claim, pod, c.Status.ReservedFor)
		}
		r := c.Status.Allocation.Devices.Results[0]
		got = r.Pool + "/" + r.Device
		return true, nil
	})
	return got
}

// A pinned pod whose claim is pending is allocated a GPU by the
// DynamicResources plugin in the cycle that schedules it, after Locus
// chose its CPUs without the device; the decision written on the pod has
// its CPUs on the GPU's NUMA node all the same, though packing alone
// prefers the other node. The GPU's place comes from its pciBusID, which
// the node's report lists on a zone, or from its numaNode attribute.
func TestDRAClaimAllocatedInTheCycle(t *testing.T) {
	withSchedulerDRA(t)
	for _, tc := range []struct {
		name string
		// hold are CPUs pods already hold on the node: they make the
		// other NUMA node packing's pick.
		hold cpuset.CPUSet
		gpu  kubetest.SliceDevice
		want int
	}{
		{name: "pciBusID on NUMA node 1", hold: cpuset.New(),
			gpu: kubetest.SliceDevice{Name: "gpu", Attributes: map[string]any{workload.AttributePCIBusID: gpuAddrOn1}}, want: 1},
		{name: "numaNode 0", hold: cpuset.New(4, 5, 12, 13),
			gpu: kubetest.SliceDevice{Name: "gpu", Attributes: map[string]any{workload.AttributeNUMANode: int64(0)}}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 1, false)
			node := c.ns + "-0"
			var held map[string]workload.Assignment
			if !tc.hold.IsEmpty() {
				held = holdCPUs(t, c.ns, node, tc.hold)
			}
			publishWithGPUs(t, node, held)
			driver := c.ns + ".gpu.example.com"
			cp.CreateDeviceClass(t, c.ns+"-gpu", driver)
			pool := c.ns + "-gpus"
			cp.CreateResourceSlice(t, pool, driver, node, tc.gpu)
			cp.CreatePendingClaim(t, c.ns, "gpu", c.ns+"-gpu")
			startScheduler(t)

			createClaimPod(t, c.ns, "trainer", "gpu")
			got := waitScheduled(t, c.ns, []string{"trainer"})["trainer"]
			if dev := waitAllocated(t, c.ns, "gpu", "trainer"); dev != pool+"/gpu" {
				t.Fatalf("claim allocated %s; want %s/gpu", dev, pool)
			}
			if got.pod.Spec.NodeName != node || !slices.Equal(got.rs.NUMANodes, []int{tc.want}) || got.rs.CPUs.Size() != 2 {
				t.Fatalf("trainer on %s, CPUs %s on NUMA nodes %v; want 2 CPUs of NUMA node %d of %s, the GPU's",
					got.pod.Spec.NodeName, got.rs.CPUs, got.rs.NUMANodes, tc.want, node)
			}
			checkSigned(t, map[string]placed{"trainer": got})
		})
	}
}

// Of two nodes with a free GPU on NUMA node 1 each, a pinned pod whose
// claim is pending goes to the one where its CPUs can sit next to the GPU,
// though packing prefers the other, whose NUMA node 1 is full: each
// node's score is of the CPUs next to the device the pod would be
// allocated there.
func TestDRAScoreFollowsThePendingDevice(t *testing.T) {
	withSchedulerDRA(t)
	c := newCluster(t, 2, false)
	aligned, full := c.ns+"-0", c.ns+"-1"
	publishWithGPUs(t, aligned, nil)
	publishWithGPUs(t, full, holdCPUs(t, c.ns, full, cpuset.New(4, 5, 6, 7, 12, 13, 14, 15)))
	driver := c.ns + ".gpu.example.com"
	cp.CreateDeviceClass(t, c.ns+"-gpu", driver)
	for _, node := range []string{aligned, full} {
		cp.CreateResourceSlice(t, node+"-gpus", driver, node,
			kubetest.SliceDevice{Name: "gpu", Attributes: map[string]any{workload.AttributePCIBusID: gpuAddrOn1}})
	}
	cp.CreatePendingClaim(t, c.ns, "gpu", c.ns+"-gpu")
	startScheduler(t)

	createClaimPod(t, c.ns, "trainer", "gpu")
	got := waitScheduled(t, c.ns, []string{"trainer"})["trainer"]
	if dev := waitAllocated(t, c.ns, "gpu", "trainer"); dev != aligned+"-gpus/gpu" {
		t.Errorf("claim allocated %s; want %s-gpus/gpu", dev, aligned)
	}
	if got.pod.Spec.NodeName != aligned || !slices.Equal(got.rs.NUMANodes, []int{1}) {
		t.Fatalf("trainer on %s, CPUs %s on NUMA nodes %v; want NUMA node 1 of %s, where the GPU's node has free CPUs",
			got.pod.Spec.NodeName, got.rs.CPUs, got.rs.NUMANodes, aligned)
	}
	checkSigned(t, map[string]placed{"trainer": got})
}

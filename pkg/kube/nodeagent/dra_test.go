package nodeagent_test

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// deviceMachine is the fixture node with a PCI device on each NUMA node.
func deviceMachine() fixture.Shape {
	s := machine
	s.Devices = []fixture.Device{
		{Address: "0000:18:00.0", Class: fixture.Class3D, Vendor: fixture.VendorNVIDIA, Device: 0x20b5, Node: 0},
		{Address: "0000:af:00.0", Class: fixture.Class3D, Vendor: fixture.VendorNVIDIA, Device: 0x20b5, Node: 1},
	}
	return s
}

// claimPod is a pinned pod of two CPUs using the ResourceClaim claim.
func claimPod(name, claim string) *corev1.Pod {
	pod := pinnedPod(name, "")
	pod.Spec.Containers = pod.Spec.Containers[:1]
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}}
	return pod
}

// A pod's claim allocated to the device on node 1 (a ResourceSlice naming
// it by PCI address) gets CPUs and memory on node 1, and one allocated a
// device the driver says is on node 0 (numaNode) gets node 0. A slice with an
// absurd attribute is ignored, said on it and on the pod holding its
// device, and the rest keeps working.
func TestDRAClaimPlacesCPUsNextToTheDevice(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	if err := os.RemoveAll(n.sysfs); err != nil {
		t.Fatal(err)
	}
	if err := fixture.WriteSysfs(deviceMachine(), n.sysfs); err != nil {
		t.Fatal(err)
	}
	const driver = "gpu.example.com"
	cp.CreateResourceSlice(t, n.name+"-gpus", driver, n.name,
		kubetest.SliceDevice{Name: "gpu-0", Attributes: map[string]any{workload.AttributePCIBusID: "0000:18:00.0"}},
		kubetest.SliceDevice{Name: "gpu-1", Attributes: map[string]any{workload.AttributePCIBusID: "0000:af:00.0"}})
	cp.CreateResourceSlice(t, n.name+"-nics", "nic.example.com", n.name,
		kubetest.SliceDevice{Name: "nic-0", Attributes: map[string]any{"numaNode": int64(0)}})
	absurd := n.name + "-absurd"
	cp.CreateResourceSlice(t, absurd, "bad.example.com", n.name,
		kubetest.SliceDevice{Name: "x", Attributes: map[string]any{"numaNode": int64(1) << 40}})
	cp.CreateAllocatedClaim(t, n.ns, "gpu", driver, n.name+"-gpus", "gpu-1")
	cp.CreateAllocatedClaim(t, n.ns, "nic", "nic.example.com", n.name+"-nics", "nic-0")
	cp.CreateAllocatedClaim(t, n.ns, "bad", "bad.example.com", absurd, "x")

	gpu := n.create(claimPod("a-gpu", "gpu"))
	nic := n.create(claimPod("b-nic", "nic"))
	bad := n.create(claimPod("c-bad", "bad"))
	n.start()

	// Packing alone puts every pod on one node: the two devices' pods
	// cannot both be where it would.
	node1 := cpuset.New(4, 5, 6, 7, 12, 13, 14, 15)
	for _, tc := range []struct {
		pod  *corev1.Pod
		node string
		on   func(cpuset.CPUSet) bool
	}{{gpu, "1", func(c cpuset.CPUSet) bool { return c.IsSubsetOf(node1) }},
		{nic, "0", func(c cpuset.CPUSet) bool { return c.Intersection(node1).IsEmpty() }}} {
		cg := n.kubelet.ContainerCgroup(tc.pod, "web")
		got := n.waitFileMatch(cg, "cpuset.cpus", "two CPUs of node "+tc.node, func(s string) bool {
			cpus, err := cpuset.Parse(s)
			return err == nil && cpus.Size() == 2 && tc.on(cpus)
		})
		n.waitFile(cg, "cpuset.mems", tc.node)
		t.Logf("%s: CPUs %s", tc.pod.Name, got)
	}
	waitEvent(t, "default", "ResourceSlice", absurd, corev1.EventTypeWarning, "ResourceSliceIgnored",
		`attributes["numaNode"]: want an int NUMA node from 0 to 1023, got 1099511627776`)
	waitEvent(t, n.ns, "Pod", bad.Name, corev1.EventTypeWarning, workload.ReasonDRADeviceUnplaced,
		"bad.example.com/"+absurd+"/x", "ResourceSlice "+absurd+" was ignored")
	// The pod holding the ignored slice's device still gets CPUs of its
	// own, placed as if it held none.
	n.waitFileMatch(n.kubelet.ContainerCgroup(bad, "web"), "cpuset.cpus", "two CPUs", func(s string) bool {
		cpus, err := cpuset.Parse(s)
		return err == nil && cpus.Size() == 2
	})
}

package workload

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

const testDriver = "gpu.example.com"

func draSlice(devs ...resourceapi.Device) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{Spec: resourceapi.ResourceSliceSpec{Driver: testDriver,
		Pool: resourceapi.ResourcePool{Name: "node-a"}, Devices: devs}}
}

func draDev(name string, attrs map[string]resourceapi.DeviceAttribute) resourceapi.Device {
	d := resourceapi.Device{Name: name, Basic: &resourceapi.BasicDevice{Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}}}
	for k, v := range attrs {
		d.Basic.Attributes[resourceapi.QualifiedName(k)] = v
	}
	return d
}

func intAttr(v int64) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{IntValue: &v} }
func strAttr(v string) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{StringValue: &v}
}
func key(device string) DRADevice {
	return DRADevice{Driver: testDriver, Pool: "node-a", Device: device}
}
func unknownAt(pci string) DRAPlace { return DRAPlace{PCI: pci, NUMA: topology.NUMAUnknown} }
func nodeAt(n int) DRAPlace         { return DRAPlace{NUMA: n} }
func attrs(kv ...any) map[string]resourceapi.DeviceAttribute {
	m := map[string]resourceapi.DeviceAttribute{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(resourceapi.DeviceAttribute)
	}
	return m
}

func TestParseResourceSlice(t *testing.T) {
	many := make([]resourceapi.Device, MaxSliceDevices+1)
	for i := range many {
		many[i] = draDev(fmt.Sprintf("d%d", i), nil)
	}
	crowded := map[string]resourceapi.DeviceAttribute{}
	for i := range MaxDeviceAttributes + 1 {
		crowded[fmt.Sprintf("a%d", i)] = intAttr(1)
	}
	var heavy []resourceapi.Device // under each device's bound, over the slice's
	for i := range MaxSliceAttributes/MaxDeviceAttributes + 1 {
		heavy = append(heavy, draDev(fmt.Sprintf("d%d", i), crowded))
		delete(heavy[i].Basic.Attributes, "a0")
	}
	for _, tc := range []struct {
		name  string
		slice *resourceapi.ResourceSlice
		want  map[DRADevice]DRAPlace
		err   string
	}{
		{name: "the Kubernetes PCI attribute and a driver's numaNode",
			slice: draSlice(draDev("gpu-0", attrs(AttributePCIBusID, strAttr("3b:00.0"))), draDev("gpu-1", attrs("numaNode", intAttr(1), "model", strAttr("X")))),
			want:  map[DRADevice]DRAPlace{key("gpu-0"): unknownAt("0000:3b:00.0"), key("gpu-1"): nodeAt(1)}},
		{name: "the driver's domain, and pciAddress",
			slice: draSlice(draDev("nic", attrs(testDriver+"/pciAddress", strAttr("0000:af:00.1"), testDriver+"/numaNode", intAttr(0)))),
			want:  map[DRADevice]DRAPlace{key("nic"): {PCI: "0000:af:00.1", NUMA: 0}}},
		{name: "another domain's numaNode is not this driver's word",
			slice: draSlice(draDev("nic", attrs("other.example.com/numaNode", intAttr(1)))),
			want:  map[DRADevice]DRAPlace{key("nic"): nodeAt(topology.NUMAUnknown)}},
		{name: "a device without attributes has no place",
			slice: draSlice(resourceapi.Device{Name: "plain"}),
			want:  map[DRADevice]DRAPlace{key("plain"): nodeAt(topology.NUMAUnknown)}},
		{name: "too many devices", slice: draSlice(many...), err: "spec.devices: 129 devices, at most 128"},
		{name: "too many attributes", slice: draSlice(draDev("x", crowded)), err: "spec.devices[0].basic.attributes: 65 attributes"},
		{name: "too many attributes in all", slice: draSlice(heavy...), err: "attributes in all, at most 2048"},
		{name: "numaNode not an int", slice: draSlice(draDev("x", attrs("numaNode", strAttr("1")))),
			err: `spec.devices[0].basic.attributes["numaNode"]: want an int NUMA node from 0 to 1023, got string "1"`},
		{name: "numaNode absurd", slice: draSlice(draDev("x", attrs("numaNode", intAttr(1<<40)))), err: "got 1099511627776"},
		{name: "pciBusID not an address", slice: draSlice(draDev("x", attrs("pciBusID", strAttr("gpu0")))), err: `attributes["pciBusID"]`},
		{name: "two addresses", slice: draSlice(draDev("x", attrs("pciBusID", strAttr("3b:00.0"), "pciAddress", strAttr("3c:00.0")))),
			err: "another attribute says 0000:3c:00.0"},
		{name: "a huge string", slice: draSlice(draDev("x", attrs("serial", strAttr(strings.Repeat("x", 1<<20))))), err: "a string of 1048576 bytes, at most 256"},
		{name: "a device twice", slice: draSlice(draDev("x", nil), draDev("x", nil)), err: `spec.devices[1].name: "x" is published twice`},
		{name: "no driver", slice: &resourceapi.ResourceSlice{}, err: "spec.driver: 0 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseResourceSlice(tc.slice)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestPodClaimNames(t *testing.T) {
	name := func(s string) *string { return &s }
	pod := &corev1.Pod{Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{
		{Name: "gpu", ResourceClaimTemplateName: name("gpu-template")},
		{Name: "nic", ResourceClaimName: name("shared-nic")},
		{Name: "later", ResourceClaimTemplateName: name("t")},
	}}, Status: corev1.PodStatus{ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: name("pod-gpu-x7k")}}}}
	got, err := PodClaimNames(pod)
	if want := []string{"pod-gpu-x7k", "shared-nic"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	pod.Spec.ResourceClaims = make([]corev1.PodResourceClaim, MaxPodClaims+1)
	if _, err := PodClaimNames(pod); err == nil || !strings.Contains(err.Error(), "spec.resourceClaims: 33 claims") {
		t.Fatalf("error %v", err)
	}
}

func TestParseClaimAllocation(t *testing.T) {
	claim := &resourceapi.ResourceClaim{}
	if got, err := ParseClaimAllocation(claim); got != nil || err != nil {
		t.Fatalf("not allocated: %v, %v", got, err)
	}
	claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "a", Driver: testDriver, Pool: "node-a", Device: "gpu-1"},
		{Request: "b", Driver: testDriver, Pool: "node-a", Device: "gpu-1"},
	}}}
	if got, err := ParseClaimAllocation(claim); err != nil || !reflect.DeepEqual(got, []DRADevice{key("gpu-1")}) {
		t.Fatalf("got %v, %v", got, err)
	}
	claim.Status.Allocation.Devices.Results[1].Pool = ""
	if _, err := ParseClaimAllocation(claim); err == nil || !strings.Contains(err.Error(), "status.allocation.devices.results[1].pool") {
		t.Fatalf("error %v", err)
	}
}

func TestPlaceDRADevices(t *testing.T) {
	topo := fixture.MustBuild(fixture.Shape{Name: "2n", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 2, ThreadsPerCore: 1})
	topo.Devices = []topology.PCIDevice{{Address: "0000:3b:00.0", NUMA: 1}}
	published := map[DRADevice]DRAPlace{
		key("by-address"): {PCI: "0000:3b:00.0", NUMA: 0}, // the machine's word wins
		key("by-node"):    nodeAt(1),
		key("elsewhere"):  unknownAt("0000:99:00.0"),
		key("node-7"):     nodeAt(7),
		key("silent"):     nodeAt(topology.NUMAUnknown),
	}
	held := []DRADevice{key("by-address"), key("by-node"), key("elsewhere"), key("node-7"), key("silent"), key("unpublished")}
	pci, nodes, unplaced := PlaceDRADevices(held, published, topo)
	if !reflect.DeepEqual(pci, []string{"0000:3b:00.0"}) || !reflect.DeepEqual(nodes, []NodeDevice{{Name: "gpu.example.com/node-a/by-node", NUMA: 1}}) {
		t.Errorf("pci %v, nodes %v", pci, nodes)
	}
	want := []string{"elsewhere (PCI address 0000:99:00.0 is not a device", "node-7 (NUMA node 7 is not a node", "silent (its slice publishes neither", "unpublished (no ResourceSlice"}
	if len(unplaced) != len(want) {
		t.Fatalf("unplaced %q", unplaced)
	}
	for i, w := range want {
		if !strings.Contains(unplaced[i], w) {
			t.Errorf("unplaced[%d] = %q, want %q", i, unplaced[i], w)
		}
	}
}

// A ResourceSlice is cluster text: any driver, or anyone who may create
// slices, writes it, and every node agent reads those of its node.
func FuzzParseResourceSlice(f *testing.F) {
	f.Add(`{"spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "a", "basic": {"attributes": {"numaNode": {"int": 1}, "resource.kubernetes.io/pciBusID": {"string": "3b:00.0"}}}}]}}`)
	f.Add(`{"spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "a", "basic": {"attributes": {"d/numaNode": {"int": -1}}}}]}}`)
	fuzzseed.Add(f, func(s string) string {
		return `{"spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "a", "basic": {"attributes": {"pciBusID": {"string": ` + strconv.Quote(s) + `}}}}]}}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": ` + strconv.Quote(s) + `}]}}`
	})
	fuzzseed.Add(f, func(s string) string { return `{"spec": {"driver": "d", "pool": {"name": "p"}, "devices": ` + s + `}}` })
	f.Fuzz(func(t *testing.T, raw string) {
		var s resourceapi.ResourceSlice
		if json.Unmarshal([]byte(raw), &s) != nil {
			return
		}
		var got map[DRADevice]DRAPlace
		var err error
		fuzzseed.Timed(t, "ParseResourceSlice", func() { got, err = ParseResourceSlice(&s) })
		fuzzseed.CheckError(t, err, "spec.")
		if err != nil {
			return
		}
		if len(got) > MaxSliceDevices {
			t.Fatalf("kept %d devices", len(got))
		}
		for d, p := range got {
			if p.NUMA < topology.NUMAUnknown || p.NUMA > topology.MaxNodeID || len(d.Device) > MaxDRANameLen {
				t.Fatalf("kept %v at %v", d, p)
			}
			if p.PCI != "" {
				if again, err := topology.ParsePCIAddress(p.PCI); err != nil || again != p.PCI {
					t.Fatalf("kept address %q, which reads back as %q, %v", p.PCI, again, err)
				}
			}
		}
	})
}

func TestPodDeviceCounts(t *testing.T) {
	gpus := func(n string) corev1.ResourceRequirements {
		q := resourceQuantity(n)
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": q}}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "warm", Resources: gpus("3")}},
		Containers:     []corev1.Container{{Name: "a", Resources: gpus("1")}, {Name: "b", Resources: gpus("1")}, {Name: "c"}},
	}}
	if got := PodDeviceCounts(pod); !reflect.DeepEqual(got, map[string]int64{"nvidia.com/gpu": 3}) {
		t.Fatalf("init container's 3 over the apps' 2: got %v", got)
	}
	pod.Spec.InitContainers = nil
	pod.Spec.Containers[0].Resources = gpus("1e9")
	if got := PodDeviceCounts(pod); got["nvidia.com/gpu"] != 2 {
		t.Fatalf("an absurd count counts as 1: got %v", got)
	}
	if got := PodDeviceCounts(&corev1.Pod{}); got != nil {
		t.Fatalf("no devices: %v", got)
	}
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

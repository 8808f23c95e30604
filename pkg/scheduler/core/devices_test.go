package core

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const (
	gpuOn0 = "0000:18:00.0"
	gpuOn1 = "0000:af:00.0"
)

// publishDevices is twoNode's report with a GPU on each node, zone
// resources as given (name: available on node 0, on node 1), and holdings.
func publishDevices(t *testing.T, node string, gpus map[string][2]int64, held map[string]workload.Assignment) *nrt.Object {
	t.Helper()
	topo := fixture.MustBuild(twoNode)
	topo.Devices = []topology.PCIDevice{{Address: gpuOn0, Class: 0x030200, NUMA: 0}, {Address: gpuOn1, Class: 0x030200, NUMA: 1}}
	o, err := nrt.Build(nrt.Input{Node: node, Topology: topo, Reserved: reservedCore, Assignments: held})
	if err != nil {
		t.Fatal(err)
	}
	for name, avail := range gpus {
		for i := range o.Zones {
			q := resource.NewQuantity(avail[i], resource.DecimalSI)
			o.Zones[i].Resources = append(o.Zones[i].Resources, nrt.Resource{Name: name, Capacity: *q, Allocatable: *q, Available: *q})
		}
	}
	return o
}

func withDevices(r Request, d Devices) Request {
	r.Devices = &d
	return r
}

// A pod holding devices gets its CPUs on their node where they fit, and a
// node where they cannot sit together, or whose report does not say where
// the devices are, scores below one where they can.
func TestPlaceNextToDevices(t *testing.T) {
	node1Full := map[string]workload.Assignment{"ns/hog": {CPUs: cpuset.New(4, 5, 6, 7, 12, 13, 14, 15), Policy: "full-pcpus"}}
	for _, tc := range []struct {
		name      string
		report    *nrt.Object
		devices   Devices
		nodes     []int
		unaligned bool
	}{
		{name: "a DRA device by PCI address", report: publishDevices(t, "n", nil, nil), devices: Devices{PCI: []string{gpuOn1}}, nodes: []int{1}},
		{name: "the other one", report: publishDevices(t, "n", nil, nil), devices: Devices{PCI: []string{gpuOn0}}, nodes: []int{0}},
		{name: "a DRA device by the slice's numaNode", report: publishDevices(t, "n", nil, nil), devices: Devices{Nodes: []int{1}}, nodes: []int{1}},
		{name: "a numaNode the machine lacks is unknown", report: publishDevices(t, "n", nil, nil), devices: Devices{Nodes: []int{7}}, unaligned: true},
		{name: "a device-plugin resource available on node 1 only",
			report: publishDevices(t, "n", map[string][2]int64{"nvidia.com/gpu": {0, 2}}, nil), devices: Devices{Resources: map[string]int64{"nvidia.com/gpu": 1}}, nodes: []int{1}},
		{name: "two asked: the node with two available",
			report: publishDevices(t, "n", map[string][2]int64{"nvidia.com/gpu": {1, 2}}, nil), devices: Devices{Resources: map[string]int64{"nvidia.com/gpu": 2}}, nodes: []int{1}},
		{name: "a resource the report does not list", report: publishDevices(t, "n", nil, nil),
			devices: Devices{Resources: map[string]int64{"nvidia.com/gpu": 1}}, unaligned: true},
		{name: "an address the report does not list", report: publishDevices(t, "n", nil, nil), devices: Devices{PCI: []string{"0000:3b:00.0"}}, unaligned: true},
		{name: "the device's node full", report: publishDevices(t, "n", nil, node1Full), devices: Devices{PCI: []string{gpuOn1}}, nodes: []int{0}, unaligned: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster()
			c.SetNRT("n", tc.report)
			c.SetPod("ns/hog", "n", nil)
			p, err := Place(c.Snapshot().Get("n"), 0, withDevices(req(2, "", 0), tc.devices))
			if err != nil {
				t.Fatal(err)
			}
			if p.Unaligned != tc.unaligned || (tc.nodes != nil && !slices.Equal(p.Result.NUMANodes, tc.nodes)) {
				t.Fatalf("CPUs %s on nodes %v, unaligned %v; want nodes %v, unaligned %v", p.Result.CPUs, p.Result.NUMANodes, p.Unaligned, tc.nodes, tc.unaligned)
			}
			plain, _ := Place(c.Snapshot().Get("n"), 0, req(2, "", 0))
			if tc.unaligned != (p.Score < plain.Score) || p.Score > plain.Score {
				t.Fatalf("score %d, the same pod without devices %d", p.Score, plain.Score)
			}
		})
	}
}

// Between nodes, the one where the device and the CPUs sit together wins,
// though the scoring strategy prefers the other.
func TestDevicesRankNodes(t *testing.T) {
	c := NewCluster()
	c.SetNRT("aligned", publishDevices(t, "aligned", nil, nil))
	c.SetNRT("busy", publishDevices(t, "busy", nil, map[string]workload.Assignment{"ns/hog": {CPUs: cpuset.New(4, 5, 6, 7, 12, 13, 14, 15), Policy: "full-pcpus"}}))
	c.SetPod("ns/hog", "busy", nil)
	r := withDevices(req(2, "", 0), Devices{PCI: []string{gpuOn1}})
	snap := c.Snapshot()
	a, errA := Place(snap.Get("aligned"), 0, r)
	b, errB := Place(snap.Get("busy"), 0, r)
	plainA, _ := Place(snap.Get("aligned"), 0, req(2, "", 0))
	plainB, _ := Place(snap.Get("busy"), 0, req(2, "", 0))
	if errA != nil || errB != nil || a.Score <= b.Score {
		t.Fatalf("aligned %d (%v), busy %d (%v)", a.Score, errA, b.Score, errB)
	}
	if plainB.Score <= plainA.Score {
		t.Fatalf("without devices most-allocated should prefer busy: %d vs %d", plainB.Score, plainA.Score)
	}
}

// A report whose device attribute cannot be read keeps the node usable:
// its devices are unknown, and said so.
func TestHostileDeviceAttribute(t *testing.T) {
	for _, value := range []string{"garbage", strings.Repeat("0000:00:00.0,", 1000), "0000:af:00.0,0000:18:00.0", "+99999999"} {
		o := publishDevices(t, "n", nil, nil)
		o.Zones[0].Attributes = append(o.Zones[0].Attributes, nrt.Attribute{Name: nrt.AttributePCIDevices, Value: value})
		for i, a := range o.Zones[1].Attributes {
			if a.Name == nrt.AttributePCIDevices {
				o.Zones[1].Attributes[i].Value = value
			}
		}
		c := NewCluster()
		c.SetNRT("n", o)
		v := c.Snapshot().Get("n")
		p, err := Place(v, 0, withDevices(req(2, "", 0), Devices{PCI: []string{gpuOn1}}))
		if err != nil || !p.Unaligned || v.devices.err == nil {
			t.Errorf("%.40q: %+v, %v, devices err %v", value, p, err, v.devices.err)
		}
		if _, err := Place(v, 0, req(2, "", 0)); err != nil {
			t.Errorf("%.40q: a pod without devices: %v", value, err)
		}
	}
}

// A pod whose devices were allocated after its CPUs were chosen is placed
// again next to them, its first CPUs free for it; where they do not fit
// there, the first choice stands.
func TestReassumeNextToDevices(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n", publishDevices(t, "n", nil, nil))
	first := mustPlace(t, c, "ns/p", "n", req(2, "", 0))
	var want int
	if slices.Equal(first.Result.NUMANodes, []int{0}) {
		want = 1
	}
	r := withDevices(req(2, "", 0), Devices{Nodes: []int{want}})
	p, _, err := c.Reassume("ns/p", "n", r)
	if err != nil || !slices.Equal(p.Result.NUMANodes, []int{want}) || p.Unaligned {
		t.Fatalf("again: %+v, %v; want node %d (first %v)", p.Result, err, want, first.Result.NUMANodes)
	}
	if _, a, ok := c.Assumed("ns/p"); !ok || !a.CPUs.Equals(p.Result.CPUs) {
		t.Fatalf("assumed %v, %v; want %s", a.CPUs, ok, p.Result.CPUs)
	}
	// The next pod is placed around the new CPUs, not the first ones.
	next := mustPlace(t, c, "ns/q", "n", req(14-2*2, "", 0))
	if next.Result.CPUs.Intersection(p.Result.CPUs).Size() > 0 {
		t.Fatalf("next pod %s overlaps %s", next.Result.CPUs, p.Result.CPUs)
	}
	if _, _, err := c.Reassume("ns/absent", "n", r); err == nil {
		t.Fatal("a pod never assumed was placed again")
	}
	held := p.Result.CPUs
	if _, _, err := c.Reassume("ns/p", "n", withDevices(req(12, "", 0), Devices{Nodes: []int{want}})); err == nil {
		t.Fatal("12 CPUs fit beside 10 on a 14-CPU node")
	}
	if _, a, _ := c.Assumed("ns/p"); !a.CPUs.Equals(held) {
		t.Fatalf("after a failed attempt the pod holds %s, want %s", a.CPUs, held)
	}
}

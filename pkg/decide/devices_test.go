package decide

import (
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// deviceShape is two nodes of four two-thread cores (node 0: CPUs 0-3,8-11;
// node 1: 4-7,12-15), with a GPU on node 1, a NIC on node 0 and a device
// whose node the firmware does not report.
var deviceShape = fixture.Shape{Name: "devices-2n", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 * gib}

const (
	gpu     = "0000:3b:00.0"
	nic     = "0000:af:00.0"
	nowhere = "0000:00:1f.0"
)

func deviceObservation(t *testing.T, ws ...workload.Workload) Observation {
	t.Helper()
	topo := fixture.MustBuild(deviceShape)
	topo.Devices = []topology.PCIDevice{
		{Address: nowhere, Class: 0x0c0500, NUMA: topology.NUMAUnknown},
		{Address: gpu, Class: 0x030200, NUMA: 1},
		{Address: nic, Class: 0x020000, NUMA: 0},
	}
	obs := Observation{Topology: topo, Config: &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New()},
		Workloads: ws, Prepared: map[string]bool{}}
	for _, w := range ws {
		obs.Prepared[w.Cgroup] = true
	}
	return obs
}

func deviceWorkload(name string, cpus int, devices ...string) workload.Workload {
	w := testWorkload(name, cpus, true, false, nil)
	w.Devices = devices
	return w
}

// heldWorkload holds devices whose nodes the kubelet reports.
func heldWorkload(name string, cpus int, held ...workload.HeldDevice) workload.Workload {
	w := testWorkload(name, cpus, true, false, nil)
	w.HeldDevices = held
	return w
}

// nodeDeviceWorkload holds a DRA device known only by its node.
func nodeDeviceWorkload(name string, cpus, node int) workload.Workload {
	w := testWorkload(name, cpus, true, false, nil)
	w.NodeDevices = []workload.NodeDevice{{Name: "gpu.example.com/pool/gpu-1", NUMA: node}}
	return w
}

func TestDecideDevices(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ws    []workload.Workload
		prev  map[string]workload.Assignment
		nodes map[string][]int // workload: its CPUs' nodes
		warn  map[string][2]string
	}{{
		name:  "on the GPU's node, where packing alone would take node 0",
		ws:    []workload.Workload{deviceWorkload("a-plain", 2), deviceWorkload("gpu", 2, gpu)},
		nodes: map[string][]int{"a-plain": {0}, "gpu": {1}},
	}, {
		name:  "devices on both nodes: either is next to one",
		ws:    []workload.Workload{deviceWorkload("both", 10, gpu, nic)},
		nodes: map[string][]int{"both": {0, 1}},
	}, {
		name:  "the GPU's node full: the other node, told",
		ws:    []workload.Workload{deviceWorkload("a-hog", 8, gpu), deviceWorkload("b-gpu", 2, gpu)},
		nodes: map[string][]int{"a-hog": {1}, "b-gpu": {0}},
		warn: map[string][2]string{"b-gpu": {ReasonDeviceNotAligned,
			"devices 0000:3b:00.0 are on NUMA nodes [1], but its CPUs 0,8 are on NUMA nodes [0] and its memory on [0]"}},
	}, {
		name:  "a device known only by its node (a DRA driver's numaNode) counts as one with an address",
		ws:    []workload.Workload{deviceWorkload("a-plain", 2), nodeDeviceWorkload("dra", 2, 1)},
		nodes: map[string][]int{"a-plain": {0}, "dra": {1}},
	}, {
		name:  "a device known by its node, the node full: the other node, told by its name",
		ws:    []workload.Workload{deviceWorkload("a-hog", 8, gpu), nodeDeviceWorkload("b-dra", 2, 1)},
		nodes: map[string][]int{"a-hog": {1}, "b-dra": {0}},
		warn: map[string][2]string{"b-dra": {ReasonDeviceNotAligned,
			"devices gpu.example.com/pool/gpu-1 are on NUMA nodes [1], but its CPUs 0,8 are on NUMA nodes [0]"}},
	}, {
		name:  "a device whose node is not reported is not guessed at",
		ws:    []workload.Workload{deviceWorkload("x", 2, nowhere)},
		nodes: map[string][]int{"x": {0}},
	}, {
		name:  "a device the machine lacks is told, the others still count",
		ws:    []workload.Workload{deviceWorkload("x", 2, "0000:99:00.0", gpu)},
		nodes: map[string][]int{"x": {1}},
		warn: map[string][2]string{"x": {ReasonDeviceNotFound,
			"devices 0000:99:00.0 are not PCI devices of this machine; its CPUs are placed without them"}},
	}, {
		name:  "CPUs held before the device was named are chosen again next to it",
		ws:    []workload.Workload{deviceWorkload("x", 2, gpu)},
		prev:  map[string]workload.Assignment{"x": {CPUs: cpuset.New(0, 8), Policy: "full-pcpus"}},
		nodes: map[string][]int{"x": {1}},
	}, {
		name:  "CPUs placed off the device's node when it was full are kept, and told",
		ws:    []workload.Workload{deviceWorkload("x", 2, gpu)},
		prev:  map[string]workload.Assignment{"x": {CPUs: cpuset.New(0, 8), Policy: "full-pcpus", Near: []int{1}}},
		nodes: map[string][]int{"x": {0}},
		warn:  map[string][2]string{"x": {ReasonDeviceNotAligned, "its CPUs 0,8 are on NUMA nodes [0]"}},
	}, {
		name:  "CPUs placed next to a device no longer held are chosen again",
		ws:    []workload.Workload{deviceWorkload("a-plain", 2), deviceWorkload("x", 2)},
		prev:  map[string]workload.Assignment{"x": {CPUs: cpuset.New(4, 12), Policy: "full-pcpus", Near: []int{1}}},
		nodes: map[string][]int{"a-plain": {0}, "x": {0}},
	}, {
		name:  "a device the kubelet reports on node 1: CPUs and memory there",
		ws:    []workload.Workload{deviceWorkload("a-plain", 2), heldWorkload("held", 2, workload.HeldDevice{Name: "example.com/fake/dev-1", Nodes: []int{1}})},
		nodes: map[string][]int{"a-plain": {0}, "held": {1}},
	}, {
		name: "a reported device's node full: the other node, told naming the device",
		ws: []workload.Workload{deviceWorkload("a-hog", 8, gpu),
			heldWorkload("b-held", 2, workload.HeldDevice{Name: "example.com/fake/dev-1", Nodes: []int{1}})},
		nodes: map[string][]int{"a-hog": {1}, "b-held": {0}},
		warn: map[string][2]string{"b-held": {ReasonDeviceNotAligned,
			"devices example.com/fake/dev-1 are on NUMA nodes [1], but its CPUs 0,8 are on NUMA nodes [0] and its memory on [0]"}},
	}, {
		name: "a device reported on a node the machine lacks is told, one without nodes left out",
		ws: []workload.Workload{heldWorkload("x", 2, workload.HeldDevice{Name: "r/far", Nodes: []int{7}},
			workload.HeldDevice{Name: "r/none"}, workload.HeldDevice{Name: "r/near", Nodes: []int{1}})},
		nodes: map[string][]int{"x": {1}},
		warn: map[string][2]string{"x": {ReasonDeviceNotFound,
			"devices r/far (NUMA nodes [7]) are reported on NUMA nodes this machine does not have"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obs := deviceObservation(t, tc.ws...)
			r := Decide(obs, Memory{Assignments: tc.prev})
			for name, want := range tc.nodes {
				if got := obs.Topology.NodesOf(r.Desired.Assignments[name].CPUs); !slices.Equal(got, want) {
					t.Errorf("%s: CPUs %s on nodes %v, want %v", name, r.Desired.Assignments[name].CPUs, got, want)
				}
			}
			if len(r.Warnings) != len(tc.warn) {
				t.Errorf("warnings %v, want %v", r.Warnings, tc.warn)
			}
			for name, w := range tc.warn {
				if !warned(r, w[0], name, w[1]) {
					t.Errorf("no %s Warning for %s naming %q: %v", w[0], name, w[1], r.Warnings)
				}
			}
			// Deciding again on its own result moves nothing and tells
			// nothing new.
			again := Decide(obs, r.Memory)
			if !SameAssignments(again.Desired.Assignments, r.Desired.Assignments) || len(again.Warnings) > 0 {
				t.Errorf("again: %v, warnings %v", again.Desired.Assignments, again.Warnings)
			}
		})
	}
}

package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// ReportedDevice is one device a container holds as another program reports
// it (the kubelet's PodResources API): the device plugin's resource name,
// the device's id, and the NUMA nodes it is said to hang off.
type ReportedDevice struct {
	Resource, ID string
	Nodes        []int
}

// HeldDevice is a device a workload holds whose NUMA nodes its source
// reports, rather than a PCI address the topology finds (Workload.Devices):
// Name is "resource/id" (example.com/gpu/gpu-1) as problems name it.
type HeldDevice struct {
	Name  string
	Nodes []int
}

// MaxHeldDevices bounds the reported devices one pod holds, all its
// containers together: eight GPUs and their NICs, with room to spare.
const MaxHeldDevices = 64

// HeldDevices reads the devices a pod's containers hold as reported (field
// names them in errors): at most MaxHeldDevices, each NUMA id a node id
// (0 to topology.MaxNodeID), sorted by name, a device two containers
// share (the same resource and id) once. A device reported without nodes
// is kept: pkg/decide leaves it out of the placement, as a PCI device
// whose node the firmware does not give.
func HeldDevices(field string, reported []ReportedDevice) ([]HeldDevice, error) {
	if len(reported) > MaxHeldDevices {
		return nil, fmt.Errorf("%s: %d devices, at most %d", field, len(reported), MaxHeldDevices)
	}
	out := make([]HeldDevice, 0, len(reported))
	for i, r := range reported {
		if r.Resource == "" || r.ID == "" {
			return nil, fmt.Errorf("%s[%d]: resource %s id %s: both must be given", field, i, topology.Quote(r.Resource), topology.Quote(r.ID))
		}
		nodes := slices.Clone(r.Nodes)
		for _, n := range nodes {
			if n < 0 || n > topology.MaxNodeID {
				return nil, fmt.Errorf("%s[%d] (%s): NUMA node %d, not 0 to %d", field, i, topology.Quote(r.Resource+"/"+r.ID), n, topology.MaxNodeID)
			}
		}
		slices.Sort(nodes)
		out = append(out, HeldDevice{Name: r.Resource + "/" + r.ID, Nodes: slices.Compact(nodes)})
	}
	slices.SortFunc(out, func(a, b HeldDevice) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b HeldDevice) bool { return a.Name == b.Name }), nil
}

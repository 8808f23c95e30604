package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Reasons of the problems of a pinned workload that holds devices.
const (
	// ReasonDeviceNotAligned: its CPUs or memory lie on a NUMA node none of
	// its devices hangs off: they did not fit on the devices' nodes when
	// it was placed, or a decision made elsewhere put them there.
	ReasonDeviceNotAligned = "DeviceNotAligned"
	// ReasonDeviceNotFound: a device it names is not a PCI device of this
	// machine; its CPUs are placed as if it did not hold that one.
	ReasonDeviceNotFound = "DeviceNotFound"
)

// nearDevices gives each pinned workload's need the NUMA nodes of its
// devices (CPUNeed.Near), so that the allocator places it next to them. A
// device whose node the firmware does not report is left out, never
// guessed; one the machine does not have is told.
func nearDevices(t *topology.Topology, ws []workload.Workload, needs map[string]workload.CPUNeed) []workload.Problem {
	var problems []workload.Problem
	for _, w := range ws {
		need, ok := needs[w.Name]
		if !ok || !need.Exclusive || len(w.Devices)+len(w.HeldDevices)+len(w.NodeDevices) == 0 {
			continue
		}
		near, missing := devicesNodes(t, w.Devices)
		near = withNodeDevices(near, w.NodeDevices)
		if len(missing) > 0 {
			problems = append(problems, workload.Problem{Workload: w.Name, Reason: ReasonDeviceNotFound,
				Message: fmt.Sprintf("devices %s are not PCI devices of this machine; its CPUs are placed without them", strings.Join(missing, ", "))})
		}
		held, elsewhere := heldNodes(t, w.HeldDevices)
		if len(elsewhere) > 0 {
			problems = append(problems, workload.Problem{Workload: w.Name, Reason: ReasonDeviceNotFound,
				Message: fmt.Sprintf("devices %s are reported on NUMA nodes this machine does not have; its CPUs are placed without them", strings.Join(elsewhere, ", "))})
		}
		near = union(near, held)
		need.Near = near
		needs[w.Name] = need
	}
	return problems
}

// devicesNodes is the sorted NUMA nodes the devices hang off (those whose
// node is known), and the addresses the topology does not have.
func devicesNodes(t *topology.Topology, addresses []string) (nodes []int, missing []string) {
	for _, addr := range addresses {
		d, ok := t.Device(addr)
		switch {
		case !ok:
			missing = append(missing, addr)
		case d.NUMA != topology.NUMAUnknown && !slices.Contains(nodes, d.NUMA):
			nodes = append(nodes, d.NUMA)
		}
	}
	slices.Sort(nodes)
	return nodes, missing
}

// heldNodes is the sorted NUMA nodes the reported devices hang off, and
// the devices reported on a node the topology does not have (a device
// reported without nodes is left out, never guessed).
func heldNodes(t *topology.Topology, held []workload.HeldDevice) (nodes []int, elsewhere []string) {
	for _, d := range held {
		if !slices.ContainsFunc(d.Nodes, func(n int) bool { _, ok := t.Node(n); return !ok }) {
			nodes = union(nodes, d.Nodes)
			continue
		}
		elsewhere = append(elsewhere, fmt.Sprintf("%s (NUMA nodes %v)", d.Name, d.Nodes))
	}
	return nodes, elsewhere
}

func union(a, b []int) []int {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// withNodeDevices adds the nodes of the devices known only by their node
// (validated against the machine where the source placed them), sorted.
func withNodeDevices(nodes []int, devs []workload.NodeDevice) []int {
	for _, d := range devs {
		nodes = union(nodes, []int{d.NUMA})
	}
	return nodes
}

// deviceNames names every device a workload holds, PCI addresses first.
func deviceNames(w workload.Workload) string {
	names := slices.Clone(w.Devices)
	for _, d := range w.HeldDevices {
		names = append(names, d.Name)
	}
	for _, d := range w.NodeDevices {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

// misaligned tells each workload whose assignment's CPUs or memory lie on
// a node none of its devices hangs off. It reads the assignments decided,
// kept ones included, so the same assignment gives the same problem at
// every reconcile, told once.
func misaligned(t *topology.Topology, needs map[string]workload.CPUNeed, ws []workload.Workload,
	as map[string]workload.Assignment) []workload.Problem {
	var problems []workload.Problem
	for _, w := range ws {
		a, ok := as[w.Name]
		near := needs[w.Name].Near
		if !ok || len(near) == 0 {
			continue
		}
		cpuNodes, memNodes := t.NodesOf(a.CPUs), memGroup(t, a)
		if isSubset(cpuNodes, near) && isSubset(memNodes, near) {
			continue
		}
		problems = append(problems, workload.Problem{Workload: w.Name, Reason: ReasonDeviceNotAligned,
			Message: fmt.Sprintf("devices %s are on NUMA nodes %v, but its CPUs %s are on NUMA nodes %v and its memory on %v: they do not fit on the devices' nodes",
				deviceNames(w), near, a.CPUs, cpuNodes, memNodes)})
	}
	return problems
}

func isSubset(small, big []int) bool {
	for _, n := range small {
		if !slices.Contains(big, n) {
			return false
		}
	}
	return true
}

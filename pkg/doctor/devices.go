package doctor

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

func init() {
	register(Check{Name: "pci-device-nodes", Order: 45, Run: checkDeviceNodes})
}

// maxNamed is how many devices a result names: enough to find them, few
// enough for one line.
const maxNamed = 3

// checkDeviceNodes says on which NUMA node each PCI device hangs, and warns
// when a machine of several nodes has devices whose node the firmware does
// not report: Locus cannot place CPUs next to those.
func checkDeviceNodes(env Env) Result {
	if !isDir(env.sys("bus/pci/devices")) {
		return Result{Status: NA, Found: "no " + env.sys("bus/pci/devices") + ": no PCI devices to place CPUs near"}
	}
	t, scan, err := topology.DiscoverScan(env.SysfsRoot)
	if err != nil {
		return unreadable(Warn, err, "Locus reads the machine and its devices from sysfs; check that sysfs is mounted at --sysfs-root")
	}
	found := devicesPerNode(t, scan)
	unknown := t.DevicesOn(topology.NUMAUnknown)
	if len(t.Nodes) < 2 || len(unknown) == 0 {
		return Result{Status: OK, Found: found}
	}
	return Result{Status: Warn,
		Found: fmt.Sprintf("%d of %d PCI devices report no NUMA node of this machine (numa_node -1): %s; %s",
			len(unknown), len(t.Devices), nameDevices(unknown, scan.OffMachine), found),
		Do: "Locus cannot align CPUs with these devices, and places their workloads as if they had none: " +
			"have the firmware report PCI locality (ACPI _PXM in the BIOS's NUMA or SRAT settings), or expect cross-node DMA"}
}

// devicesPerNode is "12 PCI devices: node 0 7, node 1 5", with what was
// left out.
func devicesPerNode(t *topology.Topology, scan topology.PCIScan) string {
	var parts []string
	for _, n := range t.Nodes {
		parts = append(parts, fmt.Sprintf("node %d %d", n.ID, len(t.DevicesOn(n.ID))))
	}
	if u := len(t.DevicesOn(topology.NUMAUnknown)); u > 0 {
		parts = append(parts, fmt.Sprintf("unknown node %d", u))
	}
	s := fmt.Sprintf("%d PCI devices: %s", len(t.Devices), strings.Join(parts, ", "))
	if scan.NotAddresses > 0 {
		s += fmt.Sprintf(" (%d entries that are no PCI address skipped, e.g. %s)", scan.NotAddresses,
			strings.Join(scan.NotAddressExamples, ", "))
	}
	return s
}

// nameDevices names the first few devices, those worth placing CPUs near
// (GPUs, NICs, NVMe, accelerators) before bridges and the like, with the
// node a device named that the machine does not have.
func nameDevices(devs []topology.PCIDevice, off []topology.PCIOffMachine) string {
	offNode := map[string]int{}
	for _, o := range off {
		offNode[o.Address] = o.Node
	}
	var named []string
	for _, others := range []bool{false, true} {
		for _, d := range devs {
			if (d.Kind() == "other") != others || len(named) == maxNamed {
				continue
			}
			s := d.Address + " " + d.Kind()
			if n, ok := offNode[d.Address]; ok {
				s += fmt.Sprintf(" (numa_node %d, no node of this machine)", n)
			}
			named = append(named, s)
		}
	}
	if more := len(devs) - len(named); more > 0 {
		named = append(named, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(named, ", ")
}

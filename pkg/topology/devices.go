package topology

import (
	"sort"

	"k8s.io/utils/cpuset"
)

// NUMAUnknown is a device's node when the firmware does not say where it
// hangs (sysfs numa_node of -1). It is shown as unknown, never guessed.
const NUMAUnknown = -1

// PCIDevice is one PCI function as sysfs describes it under
// /sys/bus/pci/devices/<address>: what it is and which NUMA node its root
// port hangs off.
type PCIDevice struct {
	// Address is the canonical domain:bus:device.function, e.g. 0000:3b:00.0.
	Address string `json:"address"`
	// Class is the 24-bit PCI class code (0x030200 is a 3D controller,
	// 0x020000 an Ethernet controller).
	Class  uint32 `json:"class"`
	Vendor uint16 `json:"vendor"`
	Device uint16 `json:"device"`
	// NUMA is the node id, or NUMAUnknown.
	NUMA int `json:"numa"`
	// LocalCPUs is the device's local_cpulist: the CPUs the kernel counts as
	// near it (empty when sysfs has none).
	LocalCPUs cpuset.CPUSet `json:"-"`
}

// Device returns the PCI device with the given canonical address.
// Topology.Devices is sorted by Address.
func (t *Topology) Device(address string) (PCIDevice, bool) {
	i := sort.Search(len(t.Devices), func(i int) bool { return t.Devices[i].Address >= address })
	if i < len(t.Devices) && t.Devices[i].Address == address {
		return t.Devices[i], true
	}
	return PCIDevice{}, false
}

// DevicesOn returns the devices attached to NUMA node id (NUMAUnknown for
// those whose node the firmware does not report), in address order.
func (t *Topology) DevicesOn(id int) []PCIDevice {
	var out []PCIDevice
	for _, d := range t.Devices {
		if d.NUMA == id {
			out = append(out, d)
		}
	}
	return out
}

package topology

import (
	"fmt"
)

// deviceJSON is a device in the topology JSON. Class, vendor and device
// are written as sysfs and lspci show them ("0x030200"); numa is -1 when
// the firmware does not say. Local CPUs are not written: the kernel's
// local_cpulist is the node's CPUs (every CPU for an unknown node), and
// reading them back so keeps one CPU list per node in the file, not one per
// device.
type deviceJSON struct {
	Address string `json:"address"`
	Class   string `json:"class"`
	Vendor  string `json:"vendor"`
	Device  string `json:"device"`
	NUMA    int    `json:"numa"`
	// HeldBy names the workloads holding the device when an agent said
	// (JSONHeld); it is no part of the machine, and reading the JSON
	// back ignores it.
	HeldBy heldBy `json:"heldBy,omitempty"`
}

// heldBy is written, never read back: who holds a device is no part of
// the machine, so a file's list is skipped unread, whatever its size.
type heldBy []string

// UnmarshalJSON implements json.Unmarshaler.
func (*heldBy) UnmarshalJSON([]byte) error { return nil }

func devicesToJSON(devs []PCIDevice, heldBy map[string][]string) []deviceJSON {
	if len(devs) == 0 {
		return nil
	}
	out := make([]deviceJSON, len(devs))
	for i, d := range devs {
		out[i] = deviceJSON{Address: d.Address, Class: fmt.Sprintf("0x%06x", d.Class),
			Vendor: fmt.Sprintf("0x%04x", d.Vendor), Device: fmt.Sprintf("0x%04x", d.Device), NUMA: d.NUMA,
			HeldBy: heldBy[d.Address]}
	}
	return out
}

// devicesFromJSON reads the devices of t's JSON; Validate then checks the
// order and the nodes against the rest of the machine.
func devicesFromJSON(in []deviceJSON, t *Topology) ([]PCIDevice, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxPCIDevices {
		return nil, fmt.Errorf("devices: %d, more than %d", len(in), MaxPCIDevices)
	}
	all := t.CPUSet()
	out := make([]PCIDevice, len(in))
	for i, d := range in {
		if err := CheckPCIAddress(d.Address); err != nil {
			return nil, fmt.Errorf("devices[%d].address: %w", i, err)
		}
		class, err := parseSysfsHex(d.Class, 6)
		if err != nil {
			return nil, fmt.Errorf("devices[%d].class: %w", i, err)
		}
		vendor, err := parseSysfsHex(d.Vendor, 4)
		if err != nil {
			return nil, fmt.Errorf("devices[%d].vendor: %w", i, err)
		}
		device, err := parseSysfsHex(d.Device, 4)
		if err != nil {
			return nil, fmt.Errorf("devices[%d].device: %w", i, err)
		}
		local := all
		if n, ok := t.Node(d.NUMA); ok {
			local = n.CPUs
		} else if d.NUMA != NUMAUnknown {
			return nil, fmt.Errorf("devices[%d].numa: %d is no node of the machine (nor -1, unknown)", i, d.NUMA)
		}
		out[i] = PCIDevice{Address: d.Address, Class: class, Vendor: uint16(vendor), Device: uint16(device),
			NUMA: d.NUMA, LocalCPUs: local}
	}
	return out, nil
}
